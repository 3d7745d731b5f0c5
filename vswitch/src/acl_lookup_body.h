/* acl_lookup_body.h - the leaf check and the lookups that use it, included
 * by acl_lookup.c once per instruction set (no include guard on purpose):
 *   LK(f)      the function's name for this instruction set
 *   LK_TARGET  its target attribute (empty: the compiler's default)
 *   LK_ISA     check a group's lanes with 2: AVX-512, 1: AVX2, 0: portable C
 * Everything that calls the check is compiled with it, so that the check
 * inlines into the loops. */

/* Lanes of group g that key k fails: bit j set if lane j does not hold. */
static inline LK_TARGET unsigned LK(group_fail)(const vsw_lgroup *g, const vsw_key *k)
{
#if LK_ISA == 2
    __m512i key = _mm512_loadu_si512(k->h);
    __m512i idx = _mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)g->idx));
    __m512i kv = _mm512_permutexvar_epi32(idx, key);       /* kv[j] = h[idx[j]] */
    __m512i v = _mm512_load_si512(g->val), m = _mm512_load_si512(g->msk);
    __mmask16 ex = _mm512_test_epi32_mask(_mm512_xor_si512(kv, v), m);
    __m512i port = _mm512_and_si512(kv, _mm512_set1_epi32(0xffff));
    __mmask16 rg = _mm512_mask_cmpgt_epu32_mask(g->rng, _mm512_sub_epi32(port, v), m);
    return (unsigned)((ex & ~g->rng) | rg) & 0xffff;
#elif LK_ISA == 1
    /* 8 lanes at a time: a permute within each 8-half of the key, the
     * lane's index bit 3 choosing which; AVX2 has no unsigned compare, so
     * a range lane holds if max(port - lo, width) == width */
    __m256i klo = _mm256_loadu_si256((const __m256i *)k->h);
    __m256i khi = _mm256_loadu_si256((const __m256i *)(k->h + 8));
    __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    __m256i low16 = _mm256_set1_epi32(0xffff), zero = _mm256_setzero_si256();
    unsigned pass = 0;
    for (unsigned h = 0; h < 2; h++) {
        __m256i idx = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(g->idx + 8 * h)));
        __m256 hi = _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28));   /* bit 3 -> sign */
        __m256i kv = _mm256_castps_si256(_mm256_blendv_ps(
            _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(klo, idx)),
            _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(khi, idx)), hi));
        __m256i v = _mm256_load_si256((const __m256i *)(g->val + 8 * h));
        __m256i m = _mm256_load_si256((const __m256i *)(g->msk + 8 * h));
        __m256i ex = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_xor_si256(kv, v), m), zero);
        __m256i d = _mm256_sub_epi32(_mm256_and_si256(kv, low16), v);
        __m256i rg = _mm256_cmpeq_epi32(_mm256_max_epu32(d, m), m);
        __m256i isr = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(g->rng >> (8 * h)), bit), bit);
        __m256i ok = _mm256_blendv_epi8(ex, rg, isr);
        pass |= (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(ok)) << (8 * h);
    }
    return ~pass & 0xffff;
#else
    unsigned f = 0;
    for (unsigned j = 0; j < VSW_LG_LANES; j++) {
        uint32_t kv = k->h[g->idx[j]];
        unsigned ex = ((kv ^ g->val[j]) & g->msk[j]) != 0;
        unsigned rg = (kv & 0xffff) - g->val[j] > g->msk[j];
        f |= (g->rng >> j & 1 ? rg : ex) << j;
    }
    return f;
#endif
}

/* Rank of the first entry of group g that k matches, else UINT32_MAX.
 * An entry matches if none of the lanes in its mask fails: with SIMD, the
 * eight masks are tested against the failed lanes in one compare, and the
 * lowest matching entry is the lowest bit of its movemask.  No branch
 * depends on which entry matches. */
static inline LK_TARGET uint32_t LK(group_match)(const vsw_tree *t, const vsw_lgroup *g,
                                                 const vsw_key *k)
{
    unsigned fail = LK(group_fail)(g, k);
#if LK_ISA
    __m128i lm = _mm_load_si128((const __m128i *)g->lanes);
    __m128i ok = _mm_cmpeq_epi16(_mm_and_si128(lm, _mm_set1_epi16((short)fail)),
                                 _mm_setzero_si128());
    unsigned m = (unsigned)_mm_movemask_epi8(ok) & g->valid;
#else
    unsigned m = 0;
    for (unsigned e = 0; e < VSW_LG_ENTRIES; e++)
        m |= (unsigned)((g->lanes[e] & fail) == 0) << (2 * e);
    m &= g->valid;
#endif
    if (!m)
        return UINT32_MAX;
    unsigned e = (unsigned)__builtin_ctz(m) >> 1;
    /* an entry whose lanes did not hold all of its rule: confirm, or go on
     * to the next entry that matched */
    while (VSW_UNLIKELY(g->verify >> e & 1) && !vsw_crule_match(&t->rules[g->rank[e]], k)) {
        m &= ~(3u << (2 * e));
        if (!m)
            return UINT32_MAX;
        e = (unsigned)__builtin_ctz(m) >> 1;
    }
    return g->rank[e];
}

/* First entry of leaf d matching k with a rank below best, else best. */
static inline LK_TARGET uint32_t LK(leaf_match)(const vsw_tree *t, uint64_t d,
                                                const vsw_key *k, uint32_t best)
{
    const vsw_lgroup *g = vsw_tn_groups(t, d);
    unsigned cnt = vsw_tn_ngroups(t, d);
    for (unsigned i = 0; i < cnt && g->rank[0] < best; i++, g++) {
        uint32_t r = LK(group_match)(t, g, k);
        if (r != UINT32_MAX)
            return r < best ? r : best;
    }
    return best;
}

static LK_TARGET uint32_t LK(lookup_tree)(const vsw_acl *a, const vsw_key *k)
{
    uint32_t best = UINT32_MAX;
    for (size_t i = 0; i < a->ntrees; i++) {
        const vsw_tree *t = &a->trees[i];
        if (t->best_rank >= best)
            break;
        best = LK(leaf_match)(t, walk(t, k), k, best);
    }
    return best;
}

/* n <= BURST_MAX frames: all walks first, then all leaf checks, so the
 * leaf loads of different frames are independent and overlap. */
static LK_TARGET void LK(lookup_burst)(const vsw_acl *a, const vsw_key *k, size_t n,
                                       uint32_t *rank)
{
    uint64_t d[BURST_MAX];
    for (size_t i = 0; i < n; i++)
        rank[i] = UINT32_MAX;
    for (size_t ti = 0; ti < a->ntrees; ti++) {
        const vsw_tree *t = &a->trees[ti];
        walk_burst(a, t, k, n, rank, d);
        for (size_t i = 0; i < n; i++)
            if (rank[i] > t->best_rank && vsw_tn_count_field(d[i]))
                rank[i] = LK(leaf_match)(t, d[i], &k[i], rank[i]);
    }
}
