/* stop.h -- Ctrl-C, SIGTERM and SIGHUP end `top` and `replay` the way q does.
 *
 * A stop signal only sets a flag; the loop that refreshes sees it within one
 * refresh and returns, so what has to be finished is finished: the terminal
 * restored, a recording's end mark written. The handlers are installed
 * without SA_RESTART, so a signal also cuts a wait short (nanosleep, a
 * write to a pipe nobody reads) instead of waiting it out.
 */
#ifndef THREADLAB_STOP_H
#define THREADLAB_STOP_H

/* Catch SIGINT, SIGTERM and SIGHUP, keeping the actions they had. Main
 * thread, paired with stop_signals_restore. */
void stop_signals_catch(void);

/* Put the old actions back. A stop signal that arrived meanwhile is passed
 * on to an old handler (the demo's, which stops its children); an old
 * default action is not taken: we stopped cleanly instead. */
void stop_signals_restore(void);

/* The stop signal that arrived since stop_signals_catch, or 0. Main thread. */
int stop_signal(void);

#endif
