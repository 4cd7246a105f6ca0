/*
 * tables.h: the recorder's growable tables of nodes, edges and call sites, found
 * by hashing (the slow paths of mf_record: a new node, edge, partner).
 */
#ifndef MPIFLOW_TABLES_H
#define MPIFLOW_TABLES_H

#include "recorder.h"

/* mf_grow doubles an array of elem-sized entries to hold at least need;
 * it returns -1 (and leaves *p) when out of memory. */
int mf_grow(void **p, int32_t *cap, int32_t need, size_t elem);

/* Slow paths of mf_record. */
int32_t mf_node_lookup(mf_rec *r, const mf_event *ev, uint64_t site, int64_t kbytes, int32_t kpartner, int32_t kcomm);
int32_t mf_edge_lookup(mf_rec *r, int32_t src, int32_t dst);
void mf_partner_add(mf_rec *r, mf_node *n, int32_t rank);

#endif
