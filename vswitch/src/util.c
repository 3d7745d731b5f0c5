/* util.c - small helpers: error messages, drop reason names. */
#include "vsw_internal.h"
#include <stdarg.h>
#include <stdio.h>

int vsw_err(vsw_error *err, int code, int rule, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        err->code = code;
        err->rule = rule;
    }
    return code;
}

const char *vsw_drop_reason_name(unsigned r)
{
    static const char *const names[VSW_DROP_REASONS] = {
        "none", "link_down", "malformed", "vlan", "spoof", "acl", "meter",
        "no_dest", "queue_full",
    };
    return r < VSW_DROP_REASONS ? names[r] : "unknown";
}
