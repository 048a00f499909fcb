/* replay.h -- `threadlab replay FILE`: play a recording (record.h) in the
 * visualizer, forward and back. */
#ifndef THREADLAB_REPLAY_H
#define THREADLAB_REPLAY_H

#include <stdbool.h>

struct replay_opts {
    const char *path;
    bool plain;             /* text frames instead of a full screen */
    bool backward;          /* --plain: last frame first */
    int frame;              /* --plain: only this frame (1-based; 0: all) */
    double at_s;            /* --at: start at (plain: show) the frame at this time;
                               negative: not given (--at 0 is the first frame) */
    int width, height;      /* --plain: the size of each frame */
    double speed;           /* 1: as recorded */
    bool big;
    const char *cast;       /* --cast: write the frames as asciicast v2 there */
};

/* Returns an exit status: 0, or 1 for a file that is not a good recording,
 * a --frame past its last, or a --cast file that cannot be written (the
 * reason on stderr). */
int replay_run(const struct replay_opts *o);

#endif
