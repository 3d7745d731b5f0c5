/* rule_table.h - the incremental rule table, private to rule_table.c (the
 * records, by cookie, and the public calls) and rule_layout.c (where each
 * rule sits in the published set and how that set is rebuilt).
 *
 * How a change reaches the data path without a full recompile:
 *   - Ranks are sparse.  A full build spreads the n rules over a rank
 *     space of about 2n (VSW_ACL_MAX_RULES at most: leaf groups store
 *     16-bit ranks), so a new rule usually finds a free rank between its
 *     neighbours in priority order and no other rule's rank changes.  When
 *     there is none, the ranks between the insertion point and the nearest
 *     free rank move by one (a "shift").  Free ranks hold a rule that never
 *     matches, so the linear reference scans them harmlessly.
 *   - Rules present at the last full build are in up to 7 "base" trees,
 *     built with hidden rules kept (see keep_hidden in acl_tree.c), so an
 *     entry can be struck out (its valid bits cleared) in a copy of the
 *     one tree that holds it, and shifts rewrite ranks in copies the same
 *     way; trees nothing changed in are shared with the previous set.
 *   - Rules added or replaced since are in one "delta" tree, rebuilt from
 *     scratch on each change (it is small).
 *   - When the delta or the struck entries grow past a bound, or no rank
 *     is free, everything is built again (a full build).
 * The published set is always a complete vsw_acl of its own (rules,
 * actions, serials by rank, its trees) swapped in with vsw_publish(). */
#ifndef VSW_RULE_TABLE_H
#define VSW_RULE_TABLE_H
#include "vsw_internal.h"

typedef struct vsw_trec {
    vsw_trule spec;         /* as installed (scope applied)                  */
    vsw_crule cr;           /* its compiled form, index = slot               */
    uint64_t  serial;       /* unique per add; 0: free slot                   */
    uint64_t  seq;          /* order among equal priorities                  */
    uint64_t  pk_done, by_done; /* counts credited from sets already freed    */
    uint8_t   in_base;      /* in the base trees (else in the delta tree)    */
} vsw_trec;

#define RT_SCOPES (VSW_MAX_PORTS + 1)     /* ports, then the global scope  */

struct vsw_rtab {
    /* records: slot = the rule's id (act.index, d->rule) */
    vsw_trec *rec;
    uint32_t  nslot, capslot;
    uint32_t *freel;        /* free slots below nslot                        */
    uint32_t  nfree;
    uint32_t *hash;         /* cookie -> slot + 1 (0: empty), linear probing  */
    uint32_t  hcap;
    uint32_t *ord;          /* live slots by (priority, seq)                 */
    uint32_t  n;
    uint32_t  per_scope[RT_SCOPES];
    unsigned  lim_scope, lim_total;
    uint64_t  next_seq, next_serial;

    /* layout (rule_layout.c): shadows of what the next set publishes */
    uint32_t   R;           /* rank space                                    */
    uint32_t  *slot_at;     /* by rank: slot + 1, 0 = free                   */
    vsw_crule *crule_at;    /* by rank (index = slot)                        */
    vsw_act   *act_at;      /* by rank, counters always 0                    */
    uint64_t  *serial_at;   /* by rank                                       */
    uint32_t  *rank_of;     /* by slot (capslot entries)                     */
    vsw_tree   base[VSW_MAX_TREES - 1];   /* the table's references          */
    size_t     nbase_trees;
    vsw_tree   delta;
    int        has_delta, delta_dirty, need_full;
    size_t     nbase, ndelta, nstruck;
    uint64_t   full_builds, shifts;
};

/* rule_layout.c */
void rt_layout_free(struct vsw_rtab *t);
/* Place live slot s (already in ord at position pos) at a rank. */
int  rt_layout_insert(struct vsw_rtab *t, uint32_t s, uint32_t pos);
/* Take slot s out of the layout (delete, or before a re-insert). */
int  rt_layout_remove(struct vsw_rtab *t, uint32_t s);
/* Slot s (in the layout) has a new rec[s].cr at the same rank (a replace
 * that keeps its place). */
int  rt_layout_update(struct vsw_rtab *t, uint32_t s);
/* Build the set the layout describes and publish it. */
int  rt_publish(vsw_switch *sw, struct vsw_rtab *t, vsw_error *err);
/* What the counters of slot s hold in live sets (current and retired not
 * yet freed) for the record with serial `serial`. */
void rt_live_counts(const vsw_switch *sw, uint32_t s, uint64_t serial,
                    uint64_t *packets, uint64_t *bytes);

#endif
