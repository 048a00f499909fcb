/* stop.c -- stop signals as a flag. See stop.h. */
#include "stop.h"

#include <signal.h>
#include <stddef.h>

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSTOP (sizeof(stop_signals) / sizeof(stop_signals[0]))

static volatile sig_atomic_t caught;     /* the signal number, or 0 */
static struct sigaction saved[NSTOP];

static void on_stop_signal(int sig)
{
    caught = sig;
}

void stop_signals_catch(void)
{
    /* No SA_RESTART: a blocked nanosleep or write returns EINTR at once. */
    struct sigaction stop = { .sa_handler = on_stop_signal };
    sigemptyset(&stop.sa_mask);
    caught = 0;
    for (size_t i = 0; i < NSTOP; i++)
        sigaction(stop_signals[i], &stop, &saved[i]);
}

void stop_signals_restore(void)
{
    for (size_t i = 0; i < NSTOP; i++) {
        sigaction(stop_signals[i], &saved[i], NULL);
        if (caught == stop_signals[i] && saved[i].sa_handler != SIG_DFL &&
            saved[i].sa_handler != SIG_IGN && !(saved[i].sa_flags & SA_SIGINFO))
            saved[i].sa_handler(caught);
    }
}

int stop_signal(void)
{
    return caught;
}
