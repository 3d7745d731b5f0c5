/* The "machine" object every vswitch benchmark writes into its JSON: CPU
 * model, online CPUs, date (UTC), git commit and load average at the end
 * (the machine is shared: the load says how much to trust the figures). */
#ifndef VSW_BENCH_MACHINE_H
#define VSW_BENCH_MACHINE_H
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* First line of `path` matching `key` (or the first line if key is NULL),
 * after the ": " when there is one, without its newline; "unknown" else. */
static inline void bench_read_line(const char *path, const char *key, char *out,
                                   size_t n)
{
    char line[512];
    snprintf(out, n, "unknown");
    FILE *fp = fopen(path, "r");
    while (fp && fgets(line, sizeof(line), fp)) {
        if (key && strncmp(line, key, strlen(key)))
            continue;
        char *c = key ? strchr(line, ':') : NULL;
        snprintf(out, n, "%s", c ? c + 2 : line);
        out[strcspn(out, "\n")] = 0;
        break;
    }
    if (fp)
        fclose(fp);
}

static inline void bench_write_machine(FILE *f)
{
    char cpu[600], load[128], commit[64] = "unknown", date[64];
    bench_read_line("/proc/cpuinfo", "model name", cpu, sizeof(cpu));
    bench_read_line("/proc/loadavg", NULL, load, sizeof(load));
    FILE *g = popen("git rev-parse --short HEAD 2>/dev/null", "r");
    if (g && fgets(commit, sizeof(commit), g))
        commit[strcspn(commit, "\n")] = 0;
    if (g)
        pclose(g);
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(f, "  \"machine\": {\"cpu\": \"%s\", \"nproc\": %ld, \"date\": \"%s\", "
               "\"git_commit\": \"%s\", \"loadavg_at_end\": \"%s\"},\n",
            cpu, sysconf(_SC_NPROCESSORS_ONLN), date, commit, load);
}
#endif
