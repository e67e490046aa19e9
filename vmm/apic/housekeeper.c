// SPDX-License-Identifier: BSD-2-Clause
/*
 * The housekeeping CPU of timer=posted (vmm/apic/housekeeper.h).
 *
 * Why no post follows a cancel, and no post reaches freed memory:
 * - Every expiry the housekeeper delivers is claimed from the queue and
 *   delivered while it holds hk->lock, and only if the vCPU's node is
 *   unchanged since it was peeked (timer/tqueue.h: the generation). The
 *   spin to the exact target between peek and claim runs without the
 *   lock, so a vCPU is never held up by it for long.
 * - Every change a vCPU makes to its timer - a register write, a TSC
 *   write, INIT, leaving the guest - runs under the same lock and moves
 *   or cancels its node before the lock is released (bumping the
 *   generation). So an expiry is delivered either entirely before such a
 *   change (as on hardware, where it would already sit in IRR) or not at
 *   all: once housekeeper_timer_cancel() returns, nothing is posted for
 *   what it cancelled.
 * - The housekeeper stops when the guest has ended, and the BSP waits for
 *   it (guest_stop_cpu) before guest_destroy() frees the vCPUs and their
 *   posted-interrupt descriptors.
 * A lock rather than only the generation, because the delivery itself
 * (the periodic re-arm, IA32_TSC_DEADLINE reading 0, LVTT's mask and
 * vector) must not interleave with the guest's change of the same timer.
 * The ticket lock is fair: a guest re-arming as fast as it can gets the
 * lock no more often than the housekeeper does.
 */
#include "drivers/apic.h"
#include "drivers/fmt.h"
#include "drivers/io.h"
#include "drivers/string.h"
#include "timer/timebase.h"
#include "timer/tqueue.h"
#include "vmm/guest.h"
#include "vmm/apic/housekeeper.h"
#include "vmm/host/irq.h"
#include "vmm/host/log.h"
#include "vmm/host/mem.h"
#include "vmm/host/percpu.h"
#include "vmm/host/placement.h"
#include "vmm/host/topology.h"
#include "vmm/host/platform.h"
#include "vmm/apic/vapic.h"
#include "vmm/trace.h"

struct housekeeper {
	struct spinlock lock;           /* the queue, and the vCPUs' timers (above) */
	struct tqueue queue;
	struct tqueue_node node[TV_MAX_CPUS];   /* by vCPU index */
	struct guest *guest;
	uint32_t cpu;                   /* physical CPU index */
	/* under lock: the housekeeper sleeps, until its host timer fires at
	 * sleep_until (0: no timer armed) or a kick wakes it */
	bool asleep;
	uint64_t sleep_until;
	/* The first key that sleep does not cover: sleep_until plus the
	 * distance wake_for() keeps, which only the housekeeper changes, and
	 * not while it sleeps (plan_sleep()). */
	uint64_t covers_before;
	uint64_t slept_for;             /* the key its last sleep was armed for */
	uint64_t recheck_tsc;           /* the longest sleep: HK_RECHECK_US */
	struct timer_advance advance;   /* host timer armed this early (under lock) */
	/* With an advance: the fastest delivery seen (before the first,
	 * lead_seed()), from the end of the spin to vlapic_timer_fire()'s
	 * return (its last act is the notification IPI); the spin ends this
	 * much before the target, so the IPI leaves at the target less at
	 * most that return's few instructions, and the guest, behind the
	 * IPI's delivery, never sees its interrupt early (the timer tests'
	 * "not early" checks). */
	uint64_t lead;
	bool lead_known;
	/* Expiries due together (fire_together()), in two steps: `post`, the
	 * fastest notification seen from the wait for its target to
	 * vlapic_timer_deliver()'s return; `more`, what each expiry after
	 * the first adds before the posts (its claim and state change), the
	 * dearest recent (more_observe()). Both seeded by lead_seed(). */
	uint64_t post_lead, more_lead;
	bool post_known;
	/* Posts due at one TSC, their notifications sent together
	 * (post_group()): the fastest seen from the wait to the send, by
	 * the number of posts m (group_lead[m - 1], known where group_known
	 * has bit m - 1; until then lead_seed()'s dry group of m). */
	uint64_t group_lead[TV_MAX_CPUS];
	uint64_t group_known;
	struct pi_batch batch;
	uint64_t posts;                 /* expiries delivered */
	uint64_t stale;                 /* peeked, then re-armed or cancelled first */
	/* fire_together()'s expiries, claimed, their state changed, in the
	 * order of their targets (host TSC) */
	struct hk_due {
		struct vcpu *v;
		uint64_t key;
		uint64_t done;  /* TSC: its state change made */
		uint64_t cost;  /* of its post */
		bool post;      /* LVTT to deliver (unless masked) */
		bool masked;    /* LVTT masked: nothing sent, not observed */
		int vec;        /* post_group(): LVTT's vector to post, or -1 */
	} due[TV_MAX_CPUS];
};

/*
 * The housekeeper never sleeps longer than this, even with nothing
 * queued: a vCPU that queues an expiry its sleep already covers - due
 * later than it wakes anyway - need not kick it (node_update()). That
 * spares the IPI, and the housekeeper's wake-up for it, for every target
 * at least this far off (a TSC deadline re-armed far ahead, a timer
 * stopped and started again), at the cost of one look at the queue per
 * interval while it idles. Armed as the stop poll of vcpu_timer.c is.
 */
#define HK_RECHECK_US   1000u

/* How long before its target the housekeeper starts an expiry's
 * delivery; with advance=off it does not look ahead at all. */
static uint64_t lead_get(const struct housekeeper *hk)
{
	return advance_get(&hk->advance) ? hk->lead : 0;
}

/* What each expiry due with the first adds to its lead (fire_together()). */
static uint64_t more_get(const struct housekeeper *hk)
{
	return advance_get(&hk->advance) ? hk->more_lead : 0;
}

/* When the housekeeper must be ready to start the delivery of an expiry
 * at host TSC `key`: as if every vCPU's were due with it
 * (fire_together()), which costs a wait on this CPU only, and spares a
 * vCPU that arms a timer due with the first a kick to wake it sooner. */
static uint64_t ready_for(const struct housekeeper *hk, uint64_t key)
{
	return key - lead_get(hk) - (hk->guest->nvcpus - 1) * more_get(hk);
}

/* When the housekeeper wakes for an expiry at host TSC `key`. */
static uint64_t wake_for(const struct housekeeper *hk, uint64_t key)
{
	return ready_for(hk, key) - advance_get(&hk->advance);
}

int housekeeper_cpu(const struct guest *g)
{
	return g->hk ? (int)g->hk->cpu : -1;
}

/* What timer=posted needs of the CPU and the guest's options, or NULL. */
static const char *posted_missing(const struct guest *g)
{
	if (!platform.vmx.posted_intr)
		return "the CPU has no posted interrupts";
	/* The housekeeper compares its own TSC with the guest's deadlines. */
	if (platform.tsc_unsynced)
		return "the CPUs' TSCs are out of step (warp test)";
	if (!g->apicv)
		return g->spec->opts.apicv ? "the CPU has no virtual-interrupt delivery (APICv)"
					   : "virtual-interrupt delivery is off (apicv=off)";
	return NULL;
}

/* The lowest free CPU on a core with no vCPU of g, else the lowest free
 * one, said so (issue 22.9); -1 if none is free. */
static int pick_auto(const struct guest *g, uint64_t busy)
{
	uint64_t free = 0;
	bool shares;
	int cpu;

	for (uint32_t c = 0; c < ncpus_online; c++)
		if (cpus[c])
			free |= BIT(c);
	cpu = place_housekeeper(host_topology.core_key, ncpus_online, free, busy, &shares);
	if (cpu >= 0 && shares)
		pr_info("guest %s: housekeeping cpu%d shares its core with a vCPU (every free CPU "
			"is a hyperthread sibling of one)", g->spec->name, cpu);
	return cpu;
}

/* housekeeping=N checked, or pick_auto(); -1 with *why when there is
 * none. */
static int pick_cpu(const struct guest *g, uint64_t busy, char *why, size_t n)
{
	int32_t want = g->spec->opts.housekeeping;
	int cpu;

	if (want == HOUSEKEEPING_AUTO) {
		cpu = pick_auto(g, busy);
		if (cpu >= 0)
			return cpu;
		fmt_snprintf(why, n, "no free CPU for housekeeping (all %u CPU%s up run%s its "
			     "vCPUs)", ncpus_online, ncpus_online == 1 ? "" : "s",
			     ncpus_online == 1 ? "s" : "");
		return -1;
	}
	if ((uint32_t)want >= ncpus_online || !cpus[want])
		fmt_snprintf(why, n, "housekeeping=%d names cpu%d, which does not exist (%u CPU%s "
			     "up)", want, want, ncpus_online, ncpus_online == 1 ? " is" : "s are");
	else if (busy & BIT(want))
		fmt_snprintf(why, n, "housekeeping=%d names cpu%d, which is taken (it runs a vCPU "
			     "of this guest, or an earlier guest kept it)", want, want);
	else
		return want;
	return -1;
}

/*
 * hlt=guest keeps HLT in non-root mode, but an expiry posted while the
 * guest has IF=0 becomes a pending virtual interrupt (the CPU processes
 * the notification whatever IF is), and a following STI;HLT then waits
 * for that virtual interrupt to wake it. The SDM says it does (Vol. 3C,
 * "Virtual-Interrupt Delivery": it "wakes a logical processor from the
 * same inactive activity states as would an external interrupt"); Bochs
 * 3.0 does only with scripts/bochs-patches/0007 (cpu/event.cc,
 * handleWaitForEvent). Every vCPU asks its CPU at start (probe 5 of
 * vmm/vcpu/vcpu_calib.c): where it wakes, HLT stays in the guest and an
 * expiry costs no exit, halted or not; where it does not, that vCPU's HLT
 * exits (vapic_inject_init()) and the halted vCPU sleeps in root mode,
 * where it serves its own timer (housekeeper_timer_park()) and any other
 * notification, a host interrupt there, wakes it.
 */
static void housekeeper_hlt_policy(struct guest *g)
{
	if (g->hlt != HLT_GUEST)
		return;
	pr_info("guest %s: hlt=guest with posted timers: HLT stays in the guest on every CPU "
		"that wakes it for a pending virtual interrupt (else %s)", g->spec->name,
		g->spec->opts.timer == TIMER_SEL_AUTO ? "that vCPU's timer stays on its CPU"
						      : "it exits");
}

static void housekeeper_create(struct guest *g, uint32_t cpu)
{
	struct housekeeper *hk = mem_alloc(sizeof(*hk));

	hk->guest = g;
	hk->cpu = cpu;
	hk->recheck_tsc = HK_RECHECK_US * (platform.tb.tsc_hz / 1000000);
	tqueue_init(&hk->queue);
	advance_init(&hk->advance, g->spec->opts.advance, g->spec->opts.advance_ns,
		     platform.tb.tsc_hz);
	g->hk = hk;
	pr_info("guest %s: APIC timers posted by housekeeping cpu%u", g->spec->name, cpu);
	housekeeper_hlt_policy(g);
}

int housekeeper_plan(struct guest *g, uint64_t busy)
{
	enum timer_backend_sel sel = g->spec->opts.timer;
	const char *missing;
	char why[128];
	int cpu;

	if (sel != TIMER_SEL_POSTED && sel != TIMER_SEL_AUTO)
		return 0;
	/* auto with hlt=guest: posted timers too, but only on the vCPUs
	 * whose CPU wakes a guest's HLT for them (probe 5 at vCPU start);
	 * the others keep their timer on their own CPU and HLT exitless
	 * (vcpu_timer_init()). */
	missing = posted_missing(g);
	if (missing && sel == TIMER_SEL_AUTO)
		return 0;       /* auto: the per-CPU backends */
	if (missing)
		return guest_end(g, GUEST_STATUS_LOAD_FAIL, "timer=posted impossible: %s", missing);
	cpu = pick_cpu(g, busy, why, sizeof(why));
	if (cpu >= 0) {
		housekeeper_create(g, (uint32_t)cpu);
		return 0;
	}
	/* auto without a free CPU is no mistake; a housekeeping= that
	 * cannot be had, or timer=posted without a CPU, is. */
	if (sel == TIMER_SEL_AUTO && g->spec->opts.housekeeping == HOUSEKEEPING_AUTO)
		return 0;
	return guest_end(g, GUEST_STATUS_LOAD_FAIL, "timer=posted impossible: %s", why);
}

void housekeeper_free(struct guest *g)
{
	if (g->hk)
		mem_free(g->hk, sizeof(*g->hk));
	g->hk = NULL;
}

/* --- the vCPU's side ------------------------------------------------------ */

void housekeeper_lock_timer(struct vcpu *v)
{
	spin_lock(&v->guest->hk->lock);
}

/* Under the lock: v's node follows its timer. True if the housekeeper
 * sleeps past the new first expiry and must be kicked. */
static inline __attribute__((always_inline)) bool node_update(struct housekeeper *hk,
								  struct vcpu *v)
{
	struct tqueue_node *n = &hk->node[v->id];
	struct vtimer *t = &v->lapic->timer;
	uint64_t key = t->target - v->tsc_offset;

	if (!t->armed) {
		tqueue_cancel(&hk->queue, n);
		return false;
	}
	tqueue_set(&hk->queue, n, key);
	if (!hk->asleep || !tqueue_is_first(&hk->queue, n))
		return false;
	return !hk->sleep_until || !timebase_reached(key, hk->covers_before);
}

static inline __attribute__((always_inline)) void unlock_timer(struct housekeeper *hk,
								 struct vcpu *v)
{
	bool kick = false;

	if (v->timer_dirty) {
		v->timer_dirty = false;
		kick = node_update(hk, v);
	}
	spin_unlock(&hk->lock);
	/* After the unlock: the housekeeper wakes to a free lock. */
	if (kick)
		apic_send_ipi(cpus[hk->cpu]->apic_id, VEC_KICK);
}

void housekeeper_unlock_timer(struct vcpu *v)
{
	unlock_timer(v->guest->hk, v);
}

/*
 * The guest's write of IA32_TSC_DEADLINE, read at guest TSC `now`, under
 * the lock: the write a guest makes for every timer it programs, lock and
 * unlock taken here rather than called, and vapic_deadline_write()'s tail
 * call. Then it is resumable: the unlock has queued the new target
 * (kicking the housekeeper if it must wake sooner) and cleared
 * timer_dirty, and the entry's own timer work for this backend - the
 * preemption timer for the time limit and the stop poll - is as the last
 * slow entry left it.
 */
int housekeeper_deadline_write(struct vcpu *v, uint64_t val, uint64_t now)
{
	struct housekeeper *hk = v->guest->hk;

	spin_lock(&hk->lock);
	vlapic_write_tsc_deadline_at(v->lapic, val, now);
	unlock_timer(hk, v);
	if (log_trace_on(TRACE_TIMER))
		trace_timer_arm(v);
	return EXIT_RESUMABLE;
}

void housekeeper_timer_cancel(struct vcpu *v)
{
	struct housekeeper *hk = v->guest->hk;

	if (v->timer_kind != TIMER_POSTED)
		return;
	spin_lock(&hk->lock);
	tqueue_cancel(&hk->queue, &hk->node[v->id]);
	spin_unlock(&hk->lock);
	/* A post made before the cancel sent its notification holding the
	 * lock we took after it. */
	vapic_pi_take_notification(v);
}

void housekeeper_timer_park(struct vcpu *v)
{
	housekeeper_timer_cancel(v);
}

void housekeeper_timer_unpark(struct vcpu *v)
{
	if (v->timer_kind != TIMER_POSTED)
		return;
	housekeeper_lock_timer(v);
	v->timer_dirty = true;          /* queued again as it stands */
	housekeeper_unlock_timer(v);
}

/* --- the housekeeping CPU ------------------------------------------------- */

static struct vcpu *node_vcpu(struct housekeeper *hk, const struct tqueue_node *n)
{
	return hk->guest->vcpus[n - hk->node];
}

/* The body of every delivery, real or the dry run of lead_seed(): fire
 * l's timer at the guest TSC (tsc_offset from host TSC), dated at its
 * target within the lead before it, and queue what is armed next at n on
 * q. Returns the TSC when the delivery was done; *target and *at the
 * expiry's target and the guest TSC it was dated at. */
static inline __attribute__((always_inline)) uint64_t
deliver(struct vlapic *l, uint64_t tsc_offset, struct tqueue *q, struct tqueue_node *n,
	uint64_t *target, uint64_t *at)
{
	struct vtimer *t = &l->timer;
	uint64_t now = rdtsc() + tsc_offset, done;

	*target = t->target;
	*at = vtimer_reached(now, *target) ? now : *target;
	vlapic_timer_fire(l, *at);
	done = rdtsc();
	if (t->armed)
		tqueue_set(q, n, t->target - tsc_offset);
	return done;
}

/* Under the lock, the ticket claimed: deliver the expiry through v's
 * posted-interrupt descriptor (vlapic_accept -> vapic_pi_post: PIR, ON,
 * the notification IPI; LVTT masked: nothing), and queue what is armed
 * next - a periodic timer's next period, from the previous target (no
 * drift), or from now if that is past too (no burst): vtimer_expire().
 * Within the lead before the target, the expiry is dated at the target.
 * Returns the TSC when the delivery was done. */
static uint64_t expire(struct housekeeper *hk, struct vcpu *v)
{
	uint64_t target, at, done = deliver(v->lapic, v->tsc_offset, &hk->queue,
					    &hk->node[v->id], &target, &at);

	if (log_trace_on(TRACE_LATE))
		trace_timer_late_posted(v, target, at);
	hk->posts++;
	return done;
}

/* The first of the two steps of an expiry due with others
 * (fire_together()), real or dry (lead_seed()): as deliver() without the
 * interrupt, which vlapic_timer_deliver() sends later under the same lock
 * hold. True if LVTT is to be delivered. */
static inline __attribute__((always_inline)) bool
expire_state(struct vlapic *l, uint64_t tsc_offset, struct tqueue *q, struct tqueue_node *n,
	     uint64_t *target, uint64_t *at)
{
	struct vtimer *t = &l->timer;
	uint64_t now = rdtsc() + tsc_offset;
	bool post;

	*target = t->target;
	*at = vtimer_reached(now, *target) ? now : *target;
	vlapic_timer_fire_state(l, *at, &post);
	if (t->armed)
		tqueue_set(q, n, t->target - tsc_offset);
	return post;
}

/* Under the lock, the ticket claimed: the first step of v's expiry, noted
 * in hk->due[i] for its post. */
static void claim_state(struct housekeeper *hk, uint32_t i, struct vcpu *v, uint64_t key)
{
	struct hk_due *d = &hk->due[i];
	uint64_t target, at;

	d->v = v;
	d->key = key;
	d->masked = vlapic_get(v->lapic, LAPIC_LVT_TIMER) & LAPIC_LVT_MASKED;
	d->post = expire_state(v->lapic, v->tsc_offset, &hk->queue, &hk->node[v->id], &target, &at);
	if (log_trace_on(TRACE_LATE))
		trace_timer_late_posted(v, target, at);
	hk->posts++;
	d->done = rdtsc();
}

/*
 * The lead before any delivery has been seen (issue 24.2): a delivery run
 * dry, timed: the steps of fire() and expire() from the end of the spin
 * that every delivery runs - the lock, the claim (on a queue of its own),
 * vlapic_timer_fire() with its vlapic_accept() - on a dry vlapic whose
 * TSC-deadline timer is due, whose post is vapic_pi_post() with its checks
 * by a dry vCPU on this CPU (vapic_pi_post_dry(): the notification comes
 * here, where vapic_pi_irq() only EOIs it); the fastest of LEAD_SEED_RUNS.
 * A delivery runs all of that and more (the claimed node's vCPU, its
 * LVTT's mask), so it costs at least as much and no IPI leaves before its
 * target; the first delivery seen replaces the seed (lead_observe():
 * lead_known stays false until then). The advance tuner's observation
 * runs after the delivery (fire()), off the path the lead covers: inside
 * it, a timer-woken first delivery cost ~70 cycles more than the seed
 * under Bochs's lockstep clock (scripts/bochs-patches/0012), and the
 * fresh guest's first expiry came 96-109 cycles late against native's
 * 32-37 (make bench's cold/posted, 86abba2); after it, 56. Without a
 * seed at all: 249-256 (before 0012).
 */
#define LEAD_SEED_RUNS  4u

static const struct vlapic_ops dry_ops = { .post = vapic_pi_post_dry };

static uint64_t lead_seed(struct housekeeper *hk)
{
	struct vlapic *dry = mem_alloc_aligned(sizeof(*dry), PAGE_SIZE);
	struct tqueue *q = mem_alloc(sizeof(*q));
	struct tqueue_node *n = mem_alloc(sizeof(*n));
	struct vcpu *owner = vapic_pi_dry_new();
	uint64_t best = ~0ull, more = 0;

	dry->ops = &dry_ops;
	dry->owner = owner;
	dry->base_msr = APIC_BASE_EN;
	vlapic_set(dry, LAPIC_SVR, LAPIC_SVR_ENABLE | 0xffu);
	vlapic_set(dry, LAPIC_LVT_TIMER, VEC_POSTED |
		   (uint32_t)FIELD_PREP(LAPIC_LVT_TIMER_MODE, LAPIC_TIMER_TSC_DEADLINE));
	tqueue_init(q);
	for (unsigned i = 0; i < LEAD_SEED_RUNS; i++) {
		struct tqueue_ticket t;
		uint64_t now = rdtsc(), start, done;

		vapic_pi_clear(owner);
		vtimer_start_deadline(&dry->timer, now, now);
		tqueue_set(q, n, now);
		t = tqueue_peek(q);
		start = rdtsc();
		spin_lock(&hk->lock);
		if (tqueue_claim(q, t)) {
			uint64_t target, at;
			bool masked = vlapic_get(dry, LAPIC_LVT_TIMER) & LAPIC_LVT_MASKED;

			done = deliver(dry, 0, q, n, &target, &at);
			if (!masked)
				best = MIN(best, done - start);
		}
		spin_unlock(&hk->lock);
	}
	/* The two steps of fire_together() alike: the post's lead is the
	 * fastest dry post; each further expiry's state change is seeded
	 * with a whole dry delivery, more than it costs, and follows the
	 * real ones down (more_observe()). */
	hk->post_lead = hk->more_lead = best;
	for (unsigned i = 0; i < LEAD_SEED_RUNS; i++) {
		uint64_t now = rdtsc(), target, at, mid;

		vapic_pi_clear(owner);
		vtimer_start_deadline(&dry->timer, now, now);
		tqueue_set(q, n, now);
		spin_lock(&hk->lock);
		if (expire_state(dry, 0, q, n, &target, &at)) {
			mid = rdtsc();
			vlapic_timer_deliver(dry);
			hk->post_lead = MIN(hk->post_lead, rdtsc() - mid);
		}
		tqueue_cancel(q, n);
		spin_unlock(&hk->lock);
	}
	/* A group of m posts due at one TSC (post_group()), for every m the
	 * guest can have: m holds of the dry vCPU, the destinations, m PIR
	 * bits and the send to this CPU; the fastest dry group of m, as a
	 * real one holds m vCPUs elsewhere and sends one IPI or more. The
	 * further expiries' state changes start earlier by what the group's
	 * lead adds to a post's, seeded with the most any m adds per
	 * expiry. */
	int vec = vlapic_timer_post_vector(dry);

	for (uint32_t m = 2; m <= hk->guest->nvcpus; m++) {
		uint64_t g = ~0ull;

		for (unsigned i = 0; i < LEAD_SEED_RUNS && vec >= 0; i++) {
			uint64_t mid, held = 0;

			vapic_pi_clear(owner);
			spin_lock(&hk->lock);
			mid = rdtsc();
			for (uint32_t j = 0; j < m; j++)
				if (vapic_pi_hold_dry(owner, &hk->batch))
					held |= BIT(j);
			vapic_pi_release_prepare(&hk->batch);
			for (uint32_t j = 0; j < m; j++)
				if (held & BIT(j))
					vapic_pi_post_held(owner, (uint8_t)vec);
			vapic_pi_release_send(&hk->batch);
			g = MIN(g, rdtsc() - mid);
			spin_unlock(&hk->lock);
		}
		if (g == ~0ull)
			g = hk->post_lead;
		hk->group_lead[m - 1] = g;
		if (g > hk->post_lead)
			more = MAX(more, (g - hk->post_lead) / (m - 1));
	}
	/* Twice that: a dry claim and post cost less than real ones (3
	 * vCPUs' coincident deadlines needed 438 a further expiry where the
	 * seed was 308, and the first round came 300 cycles late; seeded
	 * twice over, 75), and a `more` too large costs only this CPU's
	 * wait, falling by a sixteenth of the difference each batch. */
	hk->more_lead = 2 * (hk->more_lead + more);
	vapic_pi_dry_free(owner);
	mem_free(n, sizeof(*n));
	mem_free(q, sizeof(*q));
	mem_free(dry, sizeof(*dry));
	return best;
}

/* A lead that is the fastest cost seen (the seed until one is). */
static void keep_fastest(uint64_t *lead, bool *known, uint64_t cost)
{
	if (!*known || cost < *lead)
		*lead = cost;
	*known = true;
}

/* The delivery took `cost` from the end of the spin: the lead is the
 * fastest one seen, so that no later one sends its IPI before the
 * target. A masked LVTT sends none and does not count. */
static void lead_observe(struct housekeeper *hk, bool masked, uint64_t cost)
{
	if (!masked && advance_get(&hk->advance))
		keep_fastest(&hk->lead, &hk->lead_known, cost);
}

/* fire_together()'s leads: the post's is the fastest seen (no IPI before
 * its target); a further expiry's state change follows the dearest
 * recent cost - a dearer one at once, a cheaper one by a sixteenth of the
 * difference - since starting them early costs only this CPU's wait (the
 * posts still wait for their targets) while starting them late makes
 * every post late. */
static void post_observe(struct housekeeper *hk, uint64_t cost)
{
	if (advance_get(&hk->advance))
		keep_fastest(&hk->post_lead, &hk->post_known, cost);
}

static void more_observe(struct housekeeper *hk, uint64_t cost)
{
	if (advance_get(&hk->advance) == 0)
		return;
	if (cost > hk->more_lead)
		hk->more_lead = cost;
	else
		hk->more_lead -= (hk->more_lead - cost) / 16;
}

/* Under the lock: how many queued expiries, the first included, are due
 * with the first (at host TSC key): within one delivery's lead of it, so
 * that one after another each would come late. */
static uint32_t due_together(const struct housekeeper *hk, uint64_t key)
{
	uint64_t until = key + lead_get(hk);
	uint32_t k = 1;

	while (k < hk->queue.n && timebase_reached(until, hk->queue.order[k]->key))
		k++;
	return k;
}

_Static_assert(TV_MAX_CPUS <= 64, "fire_together() keeps a mask of vCPUs in 64 bits");

/* fire_together()'s claimed expiries from i on (of n) that post at one
 * host TSC, their notifications sent together (post_group()): 1 for an
 * expiry not posted (masked LVTT, a far step) or due alone. */
static uint32_t group_size(const struct housekeeper *hk, uint32_t i, uint32_t n)
{
	uint32_t m = 1;

	if (!hk->due[i].post || hk->due[i].masked)
		return 1;
	while (i + m < n && hk->due[i + m].key == hk->due[i].key && hk->due[i + m].post &&
	       !hk->due[i + m].masked)
		m++;
	return m;
}

/* How long before their target m posts at one TSC start: the fastest
 * group of m seen, or until one is the seed (lead_seed()). */
static uint64_t group_lead_get(const struct housekeeper *hk, uint32_t m)
{
	if (!advance_get(&hk->advance))
		return 0;
	return hk->group_lead[m - 1];
}

static void group_observe(struct housekeeper *hk, uint32_t m, uint64_t cost)
{
	bool known = hk->group_known & BIT(m - 1);

	if (!advance_get(&hk->advance))
		return;
	keep_fastest(&hk->group_lead[m - 1], &known, cost);
	hk->group_known |= BIT(m - 1);
}

/*
 * The m posts from due[i] on, due at one TSC: posted one after another,
 * each post's notification sent after the previous one's, the last came
 * m - 1 posts late (~130 cycles each in Bochs; smp_timers' coincident
 * deadlines, 290 cycles for the third of 3 against 28 natively). So, before
 * the wait, group_prepare() makes what vlapic_accept() would test and do
 * before a post (vlapic_timer_post_vector()); after it, post_group() holds
 * every vCPU (vapic_pi_hold(): ON set, so no other sender notifies it
 * meanwhile), works out the IPIs' destinations (one per x2APIC cluster),
 * and only then sets each PIR bit and sends (vapic_pi_release_send()): a
 * PIR bit stands a few instructions a vCPU before the IPI, as a lone
 * post's does (vapic_pi.c says why that matters). A vCPU that cannot take
 * a post now, or an LVTT that asks for more than one, goes the whole way,
 * vlapic_timer_deliver(). The wait before post_group() is the group's own
 * lead, the fastest group of m seen, so the IPI leaves at the target.
 */
static void group_prepare(struct housekeeper *hk, uint32_t i, uint32_t m)
{
	for (uint32_t j = i; j < i + m; j++)
		hk->due[j].vec = vlapic_timer_post_vector(hk->due[j].v->lapic);
}

static void post_group(struct housekeeper *hk, uint32_t i, uint32_t m)
{
	uint64_t held = 0;

	for (uint32_t j = i; j < i + m; j++)
		if (hk->due[j].vec >= 0 && vapic_pi_hold(hk->due[j].v, &hk->batch))
			held |= BIT(j - i);
	vapic_pi_release_prepare(&hk->batch);
	for (uint32_t j = i; j < i + m; j++)
		if (held & BIT(j - i))
			vapic_pi_post_held(hk->due[j].v, (uint8_t)hk->due[j].vec);
		else
			vlapic_timer_deliver(hk->due[j].v->lapic);
	vapic_pi_release_send(&hk->batch);
}

/*
 * Under the lock, t claimed, up to k - 1 more expiries due with it
 * (due_together()): vCPUs' timers often fall due at once (Linux aligns
 * every CPU's tick to the same jiffy; make bench's cyclictest threads
 * share a phase), and posted one whole delivery after another the second
 * came 361 cycles (7 us in Bochs) after the first (traced, issue 24;
 * smp_timers' coincident deadlines). So each is claimed and its state
 * changed first (claim_state(): the count, a periodic timer's next
 * period, IA32_TSC_DEADLINE reading 0), then each post is sent as its
 * target comes less the post's lead, one right after another. No vCPU
 * sees the state between the steps: each reads and writes its timer
 * under this lock (vapic.c, vapic_mmio.c). Each vCPU at most once: a
 * periodic timer re-queued with a period shorter than the lead waits for
 * the next pass. fire() began early enough: the single lead (the first
 * one's state change and post) and `more` for each of the others.
 */
static void fire_together(struct housekeeper *hk, struct tqueue_ticket t, uint32_t k,
			  uint64_t start)
{
	uint64_t until = t.key + lead_get(hk), lp = advance_get(&hk->advance) ? hk->post_lead : 0;
	uint64_t seen = BIT(t.node - hk->node), posting;
	uint32_t n = 0;

	claim_state(hk, n++, node_vcpu(hk, t.node), t.key);
	while (n < k) {
		struct tqueue_ticket m = tqueue_peek(&hk->queue);

		if (!m.node || seen & BIT(m.node - hk->node) || !timebase_reached(until, m.key) ||
		    !tqueue_claim(&hk->queue, m))
			break;
		seen |= BIT(m.node - hk->node);
		claim_state(hk, n++, node_vcpu(hk, m.node), m.key);
	}
	posting = hk->due[n - 1].done;
	for (uint32_t i = 0, first = 1, m; i < n; i += m) {
		struct hk_due *d = &hk->due[i];
		bool waited = false;
		uint64_t at, lead;

		m = group_size(hk, i, n);
		if (!d->post)
			continue;
		lead = m > 1 ? group_lead_get(hk, m) : lp;
		if (m > 1)
			group_prepare(hk, i, m);
		/* No PAUSE: a short wait to a TSC value, which a PAUSE
		 * overshoots (~140 cycles each on Skylake and later parts;
		 * in Bochs too, by a few dozen). */
		while (!timebase_reached(rdtsc(), d->key - lead))
			waited = true;
		at = rdtsc();
		/* The state changes ended late or just in time: the steps up
		 * to this first post count as the last one's. A group's lead,
		 * longer than a post's, counts as theirs too: fire() must
		 * start that much sooner. */
		if (first && !waited)
			posting = at;
		if (first)
			posting += lead - MIN(lead, lp);
		first = 0;
		if (m > 1)
			post_group(hk, i, m);
		else
			vlapic_timer_deliver(d->v->lapic);
		d->cost = rdtsc() - at;
	}
	/* After every post, off the path the leads cover. What the batch's
	 * state changes took beyond a lone expiry's (its lead less the
	 * post's), per further expiry: the first one's own steps count too,
	 * dearer here than inside deliver(). */
	for (uint32_t i = 0, m; i < n; i += m) {
		m = group_size(hk, i, n);
		if (m > 1)
			group_observe(hk, m, hk->due[i].cost);
		else if (hk->due[i].post && !hk->due[i].masked)
			post_observe(hk, hk->due[i].cost);
	}
	if (n > 1) {
		uint64_t lone = lead_get(hk) - MIN(lead_get(hk), lp), took = posting - start;

		more_observe(hk, took > lone ? (took - lone) / (n - 1) : 0);
	}
}

/* The advance brought the housekeeper here early: wait to the exact
 * target without the lock (the guest never sees its interrupt early),
 * then deliver it if the vCPU did not change its timer meanwhile, or,
 * with k - 1 others due with it, all of them (fire_together()). With
 * advance=auto, how early the host timer woke us tunes the advance. */
static void fire(struct housekeeper *hk, struct tqueue_ticket t, uint32_t k)
{
	uint64_t lead = lead_get(hk), arrived = rdtsc();
	uint64_t start = t.key - lead - (k - 1) * more_get(hk), done;
	struct vcpu *v;
	bool masked;

	while (!timebase_reached(rdtsc(), start))
		cpu_relax();
	start = rdtsc();
	spin_lock(&hk->lock);
	if (!tqueue_claim(&hk->queue, t)) {
		hk->stale++;
	} else if (k > 1) {
		fire_together(hk, t, k, start);
	} else {
		v = node_vcpu(hk, t.node);
		masked = vlapic_get(v->lapic, LAPIC_LVT_TIMER) & LAPIC_LVT_MASKED;
		done = expire(hk, v);
		lead_observe(hk, masked, done - start);
	}
	/* After the delivery, off its path (and so out of the lead): how
	 * early the host timer woke us, against the lead it was armed with. */
	if (hk->slept_for == t.key)
		advance_observe(&hk->advance, (int64_t)(arrived - ready_for(hk, t.key)));
	hk->slept_for = 0;
	spin_unlock(&hk->lock);
}

/* Under the lock: the next expiry is not due yet; sleep until it, or a
 * kick, HK_RECHECK_US at most. Returns the host TSC to arm the host timer
 * for. Only a wake for the expiry itself tunes the advance (slept_for). */
static uint64_t plan_sleep(struct housekeeper *hk, struct tqueue_ticket t, uint64_t wake,
			   uint64_t now)
{
	uint64_t recheck = now + hk->recheck_tsc;
	bool for_key = t.node && !timebase_reached(wake, recheck);

	hk->asleep = true;
	hk->sleep_until = for_key ? wake : recheck;
	/* wake_for(hk, key) is key less this, for every key (modulo 2^64):
	 * node_update() then compares without the multiply, in the vCPU's
	 * WRMSR exit. */
	hk->covers_before = hk->sleep_until - wake_for(hk, 0);
	hk->slept_for = for_key ? t.key : 0;
	return hk->sleep_until;
}

void housekeeper_run(void *arg)
{
	struct guest *g = arg;
	struct housekeeper *hk = g->hk;
	struct timer_cpu *tc = &this_cpu()->timer;

	irq_disable();
	if (advance_get(&hk->advance))
		hk->lead = lead_seed(hk);
	while (!READ_ONCE(g->ended)) {
		struct tqueue_ticket t;
		uint64_t wake, now;

		spin_lock(&hk->lock);
		hk->asleep = false;
		t = tqueue_peek(&hk->queue);
		wake = wake_for(hk, t.key);
		now = rdtsc();
		if (t.node && timebase_reached(now, wake)) {
			uint32_t k = due_together(hk, t.key);

			spin_unlock(&hk->lock);
			fire(hk, t, k);
			continue;
		}
		wake = plan_sleep(hk, t, wake, now);
		spin_unlock(&hk->lock);
		/* An HPET deadline already past: look again at once. */
		if (!timer_host_sleep_arm(tc, wake))
			continue;
		wait_for_interrupt();
	}
	timer_host_disarm_all(tc);
	pr_debug("guest %s: housekeeper: %lu expiries posted, %lu changed before their post, "
		 "advance %lu, lead %lu TSC cycles", g->spec->name, (unsigned long)hk->posts,
		 (unsigned long)hk->stale, (unsigned long)advance_get(&hk->advance),
		 (unsigned long)lead_get(hk));
}
