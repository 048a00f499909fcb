/* cli_options.c -- one table of options per command, read by one loop.
 * See cli.h.
 *
 * Every command used to carry the same getopt_long loop: an enum of option
 * ids, a struct option array, a switch with a cli_parse_long per case, and
 * the same two error messages. The table says each option once (its name,
 * where its value goes, its range); this file builds getopt_long's array
 * from it, parses, and checks the command's --help against it, so that an
 * option added to the table and not to the help (or the other way round)
 * fails the first `threadlab CMD --help`, which tests/cli/run.sh runs for
 * every command.
 */
#include <assert.h>
#include <errno.h>
#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "viz/msg.h"
#include "vthread/stack.h"

#define CLI_OPTS_MAX 64           /* options in one command's table */
#define CLI_OPT_ID_BASE 256       /* getopt ids of table rows: past any char */

static size_t table_length(const struct cli_opt *table)
{
    size_t n = 0;
    while (table[n].name)
        n++;
    assert(n < CLI_OPTS_MAX);
    return n;
}

/* ---- storing one value ----------------------------------------------------- */

/* An integer target of any width: the range check already made v fit. */
static void store_integer(void *target, size_t size, long v)
{
    switch (size) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(target, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(target, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(target, &x, 4); break; }
    case 8: { uint64_t x = (uint64_t)v; memcpy(target, &x, 8); break; }
    default: abort();              /* a table row the macros cannot make */
    }
}

/* Store arg by the row's type; false after printing what is wrong. */
static bool store(const char *cmd, const struct cli_opt *o, const char *arg)
{
    char flag[48];
    snprintf(flag, sizeof(flag), "--%s", o->name);
    long lv;
    double dv;
    switch (o->type) {
    case CLI_OPT_FLAG:
        *(bool *)o->target = true;
        return true;
    case CLI_OPT_INT:
        if (!cli_parse_long(cmd, flag, arg, o->min, o->max, &lv))
            return false;
        store_integer(o->target, o->target_size, lv);
        return true;
    case CLI_OPT_REAL:
        if (!cli_parse_double(cmd, flag, arg, o->lo, o->hi, &dv))
            return false;
        *(double *)o->target = dv;
        return true;
    case CLI_OPT_TEXT:
        *(const char **)o->target = arg;
        return true;
    case CLI_OPT_CALL:
        return o->parse(cmd, arg, o->target);
    }
    abort();
}

/* ---- --help against the table ---------------------------------------------- */

/* Does text name --name as an option (not as the start of a longer one)? */
static bool mentions(const char *text, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = strstr(text, "--"); p; p = strstr(p + 2, "--"))
        if (strncmp(p + 2, name, len) == 0 &&
            !(isalnum((unsigned char)p[2 + len]) || p[2 + len] == '-'))
            return true;
    return false;
}

static const struct cli_opt *find(const struct cli_opt *table, const char *name,
                                  size_t len)
{
    for (; table->name; table++)
        if (strlen(table->name) == len && strncmp(table->name, name, len) == 0)
            return table;
    return NULL;
}

/* The long option a help line lists, indented, as "--port N" or
 * "-c, --conns N": its name and length; NULL for any other line. */
static const char *listed_option(const char *line, size_t *len)
{
    size_t indent = strspn(line, " ");
    const char *p = line + indent;
    if (indent == 0 || indent > 8 || p[0] != '-')
        return NULL;                   /* a description, a heading, an example */
    if (p[1] != '-' && strncmp(p + 2, ", --", 4) == 0)
        p += 4;                        /* "-c, --conns": the long name */
    if (strncmp(p, "--", 2) != 0)
        return NULL;
    *len = strcspn(p + 2, " =\n");
    return p + 2;
}

/* Every row is in the help, and every option the help lists is a row (or
 * --help itself). Prints each difference; returns how many. */
static int check_help(const char *cmd, const char *text, const struct cli_opt *table)
{
    int wrong = 0;
    for (const struct cli_opt *o = table; o->name; o++)
        if (!mentions(text, o->name)) {
            fprintf(stderr, "threadlab %s: --help does not list --%s\n", cmd, o->name);
            wrong++;
        }
    for (const char *line = text; *line; ) {
        size_t len = 0;
        const char *name = listed_option(line, &len);
        bool is_help = len == 4 && strncmp(name, "help", 4) == 0;
        if (name && !is_help && !find(table, name, len)) {
            fprintf(stderr, "threadlab %s: --help lists --%.*s, which is not an option\n",
                    cmd, (int)len, name);
            wrong++;
        }
        const char *end = strchr(line, '\n');
        line = end ? end + 1 : line + strlen(line);
    }
    return wrong;
}

/* Print the command's help on stdout, checked against its table. */
static int print_help(const char *cmd, const struct cli_opt *table, void (*usage)(FILE *))
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        usage(stdout);               /* no memory to check it: print it anyway */
        return CLI_EXIT_OK;
    }
    usage(mem);
    fclose(mem);
    fputs(text, stdout);
    int wrong = check_help(cmd, text, table);
    free(text);
    return wrong ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}

bool cli_help_asked(int argc, char **argv)
{
    bool help = false;
    const char *lang = NULL;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            help = true;
        else if (!strcmp(argv[i], "--lang") && i + 1 < argc)
            lang = argv[++i];
        else if (!strncmp(argv[i], "--lang=", 7))
            lang = argv[i] + 7;
    }
    if (help && lang)
        (void)msg_set_lang(lang);
    return help;
}

/* ---- the loop ---------------------------------------------------------------- */

/* getopt_long's array and short-option string for the table. */
static void build_getopt(const struct cli_opt *table, struct option *longs, char *shorts)
{
    size_t n = table_length(table), s = 0;
    shorts[s++] = ':';               /* a missing value returns ':', not '?' */
    shorts[s++] = 'h';
    for (size_t i = 0; i < n; i++) {
        const struct cli_opt *o = &table[i];
        assert(o->type != CLI_OPT_FLAG || o->target_size == sizeof(bool));
        assert(o->type != CLI_OPT_REAL || o->target_size == sizeof(double));
        assert(o->type != CLI_OPT_CALL || o->parse);
        int has_arg = o->type == CLI_OPT_FLAG ? no_argument : required_argument;
        longs[i] = (struct option){ o->name, has_arg, NULL, CLI_OPT_ID_BASE + (int)i };
        if (o->short_name) {
            shorts[s++] = o->short_name;
            if (has_arg == required_argument)
                shorts[s++] = ':';
        }
    }
    longs[n] = (struct option){ "help", no_argument, NULL, 'h' };
    longs[n + 1] = (struct option){ NULL, 0, NULL, 0 };
    shorts[s] = '\0';
}

/* The row a getopt result stands for, or NULL (help, errors). */
static const struct cli_opt *row_of(const struct cli_opt *table, int c)
{
    if (c >= CLI_OPT_ID_BASE)
        return &table[c - CLI_OPT_ID_BASE];
    for (; table->name; table++)
        if (table->short_name && table->short_name == c)
            return table;
    return NULL;
}

int cli_parse_options(const char *cmd, int argc, char **argv, const struct cli_opt *table,
                      void (*usage)(FILE *out), int max_args, int *first_arg)
{
    struct option longs[CLI_OPTS_MAX + 2];
    char shorts[2 * CLI_OPTS_MAX + 3];
    build_getopt(table, longs, shorts);
    if (cli_help_asked(argc, argv))  /* before any option: --lang may be one it lacks */
        return print_help(cmd, table, usage);

    int c;
    opterr = 0;
    optind = 0;                      /* 0: start over, even after an earlier parse */
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        const char *flag = argv[optind - 1];
        const struct cli_opt *o = row_of(table, c);
        if (o) {
            if (!store(cmd, o, optarg))
                return CLI_EXIT_USAGE;
            if (o->given)
                *o->given = true;
        } else if (c == 'h') {
            return print_help(cmd, table, usage);
        } else {
            cli_usage_error(cmd, c == ':' ? "option '%s' needs a value"
                                          : "unknown option '%s'", flag);
            return CLI_EXIT_USAGE;
        }
    }
    if (max_args >= 0 && argc - optind > max_args) {
        cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + max_args]);
        return CLI_EXIT_USAGE;
    }
    if (first_arg)
        *first_arg = optind;
    return CLI_PARSED;
}

bool cli_parse_stack(const char *cmd, const char *arg, void *target)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(arg, &end, 10);
    unsigned long long unit = *end == 'K' || *end == 'k' ? 1024
                            : *end == 'M' || *end == 'm' ? 1024 * 1024 : 1;
    if (unit != 1)
        end++;
    if (errno || end == arg || *end || arg[0] == '-' || n > (1ull << 30) / unit ||
        n * unit < VT_STACK_MIN_BYTES) {
        cli_usage_error(cmd, "--stack: '%s' is not a size from 16K to 1024M (bytes, "
                        "or a number with K or M)", arg);
        return false;
    }
    *(size_t *)target = (size_t)(n * unit);
    return true;
}
