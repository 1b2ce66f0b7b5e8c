/* sim_prefixgen — synthetic prefix structure (block hash ids) for requests.
 *
 * Gives a synthetic request the hash_ids a Mooncake trace would carry: one
 * uint32 per block of `block_tokens` prompt tokens (the last block may be
 * partial), so n_hash = ceil(input_tokens / block_tokens). Kinds: shared
 * system prompts (Zipf popularity), multi-turn sessions (each turn's prompt
 * is the previous prompt + its answer + a new user message) and RAG (shared
 * documents, Zipf popularity). Ids are content-addressed: a block made only
 * of shared content (a prompt, documents) gets 0x80000000 | a 31-bit hash of
 * which content it holds (item, token offsets), identical in every request;
 * a block holding any content unique to a request or a session gets a
 * counter id below 0x80000000 (fresh ids wrap after 2^31 blocks). Ids are
 * meant to be read as hash CHAINS, as vLLM and Mooncake do: block i is
 * reusable only if blocks 0..i all match. Randomness comes from the stream
 * "prefix" of the seed only. Ownership: the generator owns every id array it
 * hands out; an array stays valid until sim_prefixgen_release() of its
 * request (or destroy), whatever else is generated meanwhile. Memory is the
 * arrays of requests not yet released, a free pool no larger than that (min
 * 64 buffers), and one context chain per multi-turn session slot. */
#ifndef SIM_PREFIXGEN_H
#define SIM_PREFIXGEN_H

#include "sim_err.h"
#include "sim_scenario.h"
#include "sim_workload.h"

#include <stddef.h>
#include <stdint.h>

/* Ids at or above this bit mark blocks of shared content. */
#define SIM_PREFIX_SHARED_BIT 0x80000000u

typedef struct sim_prefixgen sim_prefixgen;

/* `slots` is the number of multi-turn session slots (sessions open at once:
 * workload.prefix.sessions in open loop, the client count in closed loop);
 * ignored for other kinds. Kind none is rejected (nothing to generate). */
int sim_prefixgen_create(const sim_prefix_cfg *cfg, int32_t slots, uint64_t seed,
                         sim_prefixgen **out, sim_err *err);
void sim_prefixgen_destroy(sim_prefixgen *g);

sim_prefix_kind sim_prefixgen_kind(const sim_prefixgen *g);

/* Gives g id space k of n (0 <= k < n; before its first attach): its fresh
 * ids are k, k + n, k + 2n, ... (below the shared bit), its shared content's
 * ids are hashed with k (so its prompts and documents are its own) and its
 * multi_turn sessions are numbered k + 1, k + 1 + n, ..., so n generators
 * (a workload's SLO classes) never give two requests of different spaces a
 * common id or session. Space 0 of 1 is the default (ids as without it). */
void sim_prefixgen_set_space(sim_prefixgen *g, int32_t k, int32_t n);

/* Attaches prefix structure to *spec, whose id and output_tokens are set:
 * own_tokens (>= 1) are the request's own prompt tokens (system_prompt: its
 * text after the shared prompt; multi_turn: the new user message; rag: the
 * question). Sets input_tokens (shared/context tokens + own, capped at
 * INT32_MAX), n_hash, hash_ids and session (multi_turn: session id + 1, else
 * 0); multi_turn also ctx_ids / n_ctx_ids (the same array continued over
 * the answer's blocks, with the ids the next turn gives them). multi_turn: `slot` picks the session slot (a closed-loop client), or
 * -1 for a uniformly random slot; other kinds ignore it. Returns 0 or
 * SIM_ENOMEM (spec untouched). */
int sim_prefixgen_attach(sim_prefixgen *g, int32_t slot, int32_t own_tokens,
                         sim_request_spec *spec, sim_err *err);

/* Gives back the id array of a request attached by this generator (no-op
 * when spec->hash_ids is NULL); the spec may be a copy. Release each request
 * exactly once: a second release hits SIM_ASSERT while the array sits in the
 * free pool or serves a later request, and is undefined once it was freed. */
void sim_prefixgen_release(sim_prefixgen *g, const sim_request_spec *spec);

/* Request spec (attached by g, not yet released) is to be known by id from
 * now on: its release then gives that id (a merged workload renumbering a
 * class's requests). */
void sim_prefixgen_renumber(sim_prefixgen *g, const sim_request_spec *spec, uint64_t id);

/* Requests attached and not yet released. */
int64_t sim_prefixgen_live(const sim_prefixgen *g);

/* Heap bytes holding ids: live arrays, the free pool and session chains. */
size_t sim_prefixgen_bytes(const sim_prefixgen *g);

/* The id of a full block whose tokens are exactly tokens [offset, offset +
 * tokens) of shared item `item` (a system prompt for SIM_PREFIX_SYSTEM_PROMPT,
 * a document for SIM_PREFIX_RAG; items count from 0). A block spanning two
 * documents hashes both pieces, so it has no single-piece id. */
uint32_t sim_prefixgen_piece_id(sim_prefix_kind kind, int64_t item, int64_t offset, int64_t tokens);

#endif
