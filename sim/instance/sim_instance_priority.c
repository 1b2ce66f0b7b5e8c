/* sim_instance_priority — priority scheduling of an instance's waiting
 * queue (workload.classes; part of the instance, sim_instance_impl.h).
 *
 * With priorities on, the waiting queue is kept ordered by (priority,
 * arrival, id): the order vLLM's priority policy pops its waiting heap in.
 * A request joins after every request of a key no larger than its own, so a
 * preempted request goes back among its class by its arrival rather than
 * to the very front, and an urgent arrival overtakes every queued request
 * of a later class. Requests not yet received (scheduler.recv_interval)
 * stay at the queue's tail in arrival order and take their place when the
 * scheduler polls. Under KV pressure the victim is the running request of
 * the largest key (the least urgent class's newest arrival), as vLLM
 * preempts with its priority policy. Without priorities none of this runs.
 * No allocation, no failure. */
#include "sim_instance_impl.h"

void sim_instance_set_priority(sim_instance *in, int on) { in->by_priority = on != 0; }

/* a is served before b. */
static int req_before(const sim_req *a, const sim_req *b)
{
    if (a->spec.priority != b->spec.priority) return a->spec.priority < b->spec.priority;
    if (a->spec.arrival != b->spec.arrival) return a->spec.arrival < b->spec.arrival;
    return a->spec.id < b->spec.id;
}

void sim_instance_waiting_place(sim_instance *in, sim_req *r)
{
    sim_req *after = in->waiting.tail;
    for (int64_t k = 0; k < in->unseen && after; k++) after = after->run_link.prev;
    while (after && req_before(r, after)) after = after->run_link.prev;
    sim_req_list_insert_after(&in->waiting, after, r, SIM_RUN_LINK);
}

void sim_instance_waiting_receive(sim_instance *in)
{
    int64_t k = in->unseen;
    if (!in->by_priority || k <= 0) return;
    /* The k newest, oldest first, each into its place among the received. */
    sim_req *first = in->waiting.tail;
    for (int64_t i = 1; i < k && first; i++) first = first->run_link.prev;
    for (sim_req *r = first; r;) {
        sim_req *next = r->run_link.next;
        sim_req_list_remove(&in->waiting, r, SIM_RUN_LINK);
        in->unseen--; /* the received part: all but the unseen still behind r */
        sim_instance_waiting_place(in, r);
        r = next;
    }
    in->unseen = 0;
}

sim_req *sim_instance_priority_victim(const sim_instance *in, const sim_lane *ln)
{
    sim_req *best = NULL;
    for (sim_req *r = ln->running.head; r; r = r->run_link.next)
        if (!r->fetching && (!best || req_before(best, r))) best = r;
    return best;
}

sim_time sim_instance_priority_oldest(const sim_instance *in)
{
    sim_time oldest = -1;
    for (const sim_req *r = in->waiting.head; r; r = r->run_link.next)
        if (oldest < 0 || r->spec.arrival < oldest) oldest = r->spec.arrival;
    return oldest;
}

int64_t sim_instance_pending_prefill_before(const sim_instance *in, int32_t priority)
{
    int64_t t = in->pending_prefill, k = 0;
    if (!in->by_priority) return t;
    /* From the tail: the unseen arrivals in any order, then the received
     * part in (priority, arrival, id) order, so the first received request
     * of a priority <= this one ends the less urgent ones. */
    for (const sim_req *r = in->waiting.tail; r; r = r->run_link.prev, k++) {
        if (r->spec.priority > priority) t -= r->prefill_target - r->prefilled;
        else if (k >= in->unseen) break;
    }
    return t;
}
