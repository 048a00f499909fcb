/* fmt.h -- numbers for people: a value printed in the largest unit it
 * reaches ("950us", "12.3ms", "1.05M"), as the screens and the result
 * tables show it.
 *
 * One mechanism, fmt_steps(), and a table of steps per kind of number, so
 * that a new unit is a table, not another if-else ladder. Header only: the
 * screens (viz) and the result tables (load) share it without
 * depending on each other. All functions are pure; any thread.
 */
#ifndef THREADLAB_SIM_FMT_H
#define THREADLAB_SIM_FMT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fmt_step {
    double from;          /* this step is for values >= from (the last: -INFINITY) */
    double unit;          /* what one of the printed unit is worth */
    const char *format;   /* printf format of value / unit, one double */
};

/* Print v with the first step whose from it reaches. steps must end with a
 * step from -INFINITY, so that every value finds one. */
static inline void fmt_steps(char *out, size_t len, double v, const struct fmt_step *steps)
{
    while (!(v >= steps->from) && steps->from != -INFINITY)   /* NaN: the last */
        steps++;
    snprintf(out, len, steps->format, v / steps->unit);
}

/* A time in microseconds: "950us", "12.3ms", "2.05s" (latency tables). */
static inline void fmt_us(char *out, size_t len, double us)
{
    static const struct fmt_step steps[] = {
        { 1e6, 1e6, "%.2fs" }, { 1e3, 1e3, "%.1fms" }, { -INFINITY, 1, "%.0fus" },
    };
    fmt_steps(out, len, us, steps);
}

/* A time in nanoseconds: "850ns", "1.5us", "12.3ms", "2.0s" (screens). */
static inline void fmt_ns(char *out, size_t len, uint64_t ns)
{
    static const struct fmt_step steps[] = {
        { 1e9, 1e9, "%.1fs" }, { 1e6, 1e6, "%.1fms" }, { 1e3, 1e3, "%.1fus" },
        { -INFINITY, 1, "%.0fns" },
    };
    fmt_steps(out, len, (double)ns, steps);
}

/* A count or a rate: "9999", "12.3k", "1.05M" (below 10k, every digit). */
static inline void fmt_count(char *out, size_t len, double v)
{
    static const struct fmt_step steps[] = {
        { 1e6, 1e6, "%.2fM" }, { 1e4, 1e3, "%.1fk" }, { -INFINITY, 1, "%.0f" },
    };
    fmt_steps(out, len, v, steps);
}

#endif
