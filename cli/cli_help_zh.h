/* cli_help_zh.h -- every command's --help in Chinese (sim's is
 * cli_sim_help.h). A command prints its text in the language msg_lang()
 * gives: --lang zh (read by --help wherever it stands, cli_options.c), or
 * a LANG, LC_MESSAGES or LC_ALL starting with zh. The texts whose comment
 * says printf take the English text's arguments, in the same order. */
#ifndef THREADLAB_CLI_HELP_ZH_H
#define THREADLAB_CLI_HELP_ZH_H

#include "viz/msg.h"   /* msg_lang(): which text to print */

/* A command's or a model's one-line summary in Chinese; NULL for a name
 * without one (the English summary is printed then). */
const char *cli_command_summary_zh(const char *name);
const char *cli_model_summary_zh(const char *name);

/* threadlab --help: the head, the commands (cli_command_summary_zh), the tail. */
extern const char cli_usage_head_zh[], cli_usage_tail_zh[];
/* serve: the head, the models (cli_model_summary_zh), the options (printf). */
extern const char cli_serve_head_zh[], cli_serve_options_zh[];
extern const char cli_top_usage_zh[];                      /* printf */
extern const char cli_replay_usage_zh[];
/* demo and compare: the head, the options they share (cli_plan_options_zh,
 * printf), their own options (compare's printf), the scenarios, the tail. */
extern const char cli_demo_head_zh[], cli_demo_options_zh[], cli_demo_tail_zh[];
extern const char cli_compare_head_zh[], cli_compare_options_zh[], cli_compare_tail_zh[];
extern const char cli_plan_options_zh[];
extern const char cli_load_usage_zh[];
extern const char cli_calibrate_usage_zh[];

#endif
