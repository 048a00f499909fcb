/* main.c -- check_des: the simulator, checked against queueing theory,
 * against itself (determinism), and against the lessons it is there to
 * teach. This file holds the run every case checks and the cases the
 * subjects' files fill. */
#include "check_des.h"

void run_checked(const struct sim_opts *o, struct sim_report *r)
{
    ck_assert_int_eq(sim_run(o, r), 0);
    if (r->lines_sent == 0)
        return;
    double lw = r->arrival_per_s * r->sojourn_ns / 1e9;
    ck_assert_msg(fabs(r->mean_in_system - lw) <= 0.01 * lw,
                  "%s: Little's law: L %.4f but lambda x W %.4f",
                  sim_model_name(o->model), r->mean_in_system, lw);
}

int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void run(const struct sim_opts *o, struct sim_report *r)
{
    run_checked(o, r);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);    /* the figures survive a failing fork */
    Suite *s = suite_create("des");
    TCase *engine = tcase_create("engine");
    tcase_set_timeout(engine, 120);      /* a hang guard: the tail cases draw millions */
    add_engine_tests(engine);
    add_profile_tests(engine);
    suite_add_tcase(s, engine);
    TCase *theory = tcase_create("queueing theory");
    tcase_set_timeout(theory, 600);      /* CPU-bound and deterministic: a guard against a hang only */
    add_theory_tests(theory);
    suite_add_tcase(s, theory);
    TCase *sched = tcase_create("scheduler");
    add_scheduler_tests(sched);
    suite_add_tcase(s, sched);
    TCase *lessons = tcase_create("lessons");
    tcase_set_timeout(lessons, 600);     /* likewise */
    add_lesson_tests(lessons);
    suite_add_tcase(s, lessons);
    TCase *props = tcase_create("properties");
    tcase_set_timeout(props, 60);
    add_property_tests(props);
    suite_add_tcase(s, props);
    TCase *simple = tcase_create("simple scheduler");
    tcase_set_timeout(simple, 600);      /* a hang guard */
    add_simple_scheduler_tests(simple);
    suite_add_tcase(s, simple);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
