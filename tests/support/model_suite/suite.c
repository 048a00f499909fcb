/* suite.c -- the shared echo suite for one model (model_suite.h): its
 * cases by subject, each with its hang guard; each subject's file adds its
 * tests. */
#include "internal.h"

/* The hang guard on a case, and the case in s (the labs find a case by
 * its tcase_create, so each is named where it is created). */
static TCase *guarded(Suite *s, TCase *tc, int timeout_s)
{
    tcase_set_timeout(tc, timeout_s);
    suite_add_tcase(s, tc);
    return tc;
}

Suite *model_suite(const char *model_name)
{
    model_under_test = model_name;
    bool loop_model = is_loop_model(model_name);
    Suite *s = suite_create(model_name);
    TCase *proto = guarded(s, tcase_create("protocol"), 30);
    TCase *blocking = guarded(s, tcase_create("blocking"), 30);
    TCase *stop = guarded(s, tcase_create("stop"), 30);
    TCase *fairness = guarded(s, tcase_create("fairness"), 30);
    TCase *resets = guarded(s, tcase_create("resets"), 30);
    TCase *faults = guarded(s, tcase_create("faults"), 120);
    TCase *process = guarded(s, tcase_create("process"), 60);
    TCase *limits = guarded(s, tcase_create("limits"), 60);
    TCase *task = guarded(s, tcase_create("task"), 60);
    TCase *load = guarded(s, tcase_create("load"), 2 * LOAD_LINE_TIMEOUT_S);

    ms_add_protocol_tests(proto, blocking);
    ms_add_framing_tests(proto, faults);
    ms_add_stop_tests(stop);
    ms_add_fairness_tests(fairness, stop, loop_model);
    ms_add_reset_tests(resets);
    ms_add_fault_tests(faults);
    ms_add_process_tests(process);
    ms_add_limit_tests(limits);
    ms_add_task_tests(task, loop_model);
    ms_add_load_tests(load);
    return s;
}
