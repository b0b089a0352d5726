/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs: the object and its state (sroce_qp.c), the receive side
 * (sroce_rq.c, sroce_resp.c, sroce_ud.c), multicast (sroce_mcast.c) and
 * the kernel consumers' verbs (sroce_kverbs.c). The send side has
 * sroce_sq.h.
 */
#ifndef SROCE_QP_H
#define SROCE_QP_H

/* Why a requester sends again (the sroce_retransmit trace event). */
enum sroce_retx_cause {
	SROCE_RETX_TIMEOUT,	/* the local ACK timer expired */
	SROCE_RETX_SEQ_NAK,	/* the responder NAKed a PSN sequence error */
	SROCE_RETX_READ_GAP,	/* a read response is missing */
	SROCE_RETX_RNR,		/* an RNR NAK (sent again after its wait) */
	SROCE_RETX_PROBE,	/* a tail-loss probe: the last packet again */
};

struct sroce_sq_poller;

/* Per send-queue-slot state the requester keeps beside its WQE copy. */
struct sroce_swqe_state {
	u32 first_psn;		/* PSN of the WQE's first packet */
	u32 npsn;		/* PSNs it spans (a read: its responses) */
	u32 length;		/* message bytes */
	u32 read_off;		/* read/atomic: response bytes placed */
	int status;		/* IB_WC_SUCCESS, or an error found locally */
};

/**
 * struct sroce_tx_train - packets of one sender held to leave as one UDP
 *	GSO fraglist packet (sroce_tx.c).
 * @head: the first packet; the others hang on its frag_list. NULL when
 *	the train is empty
 * @tail: the last packet chained, NULL while there is only @head
 * @segs: packets in the train
 * @head_len: the head's own bytes from the IP header on; the head's
 *	skb->len counts the whole train
 */
struct sroce_tx_train {
	struct sk_buff *head;
	struct sk_buff *tail;
	u32 segs;
	u32 head_len;
};

/**
 * struct sroce_req - requester state, under &sroce_qp.req_lock.
 * @fetched: SQ index up to which WQEs were copied into @shadow
 * @head: oldest WQE not yet completed
 * @next: WQE being sent
 * @started: WQEs before it were sent at least once (later sends resend)
 * @off: bytes of @next already sent
 * @sge: SGE of @next that byte @off is in
 * @sge_off: offset of byte @off within that SGE
 * @psn: PSN of the next packet
 * @una: oldest PSN not yet acknowledged
 * @rd_pending: reads and atomics sent and not yet completed
 * @since_ackreq: PSNs sent since the last packet asking for an ACK
 * @retry_left: retransmissions left before the QP fails
 * @rnr_left: RNR retries left (7: unlimited)
 * @rnr_wait: waiting out an RNR NAK's timer before resending
 * @timer_una: @una when the timer was armed, to detect progress
 * @timer_psn: @psn when the timer was armed, to see whether it still sends
 * @timer_probe: the armed timer is the tail-loss probe's, not the
 *	retransmission timeout
 * @timer_ns: what it was armed for
 * @stalled_ns: probe timers that expired with @una unmoved and the
 *	requester not at a tail; at the timeout the probe gives way to it
 * @probe_ackreq: the next packet is the probe: it asks for an ACK
 * @probed: the tail had its chance of a probe since @una last moved
 * @rto_hold: a retransmission timeout went back to @una: once one packet
 *	went (@rto_sent), no more until an answer moves @una or makes the
 *	requester go back for another cause (sroce_comp_timer())
 * @rto_sent: that packet went
 * @nak_recovery: resending after a sequence NAK for @nak_psn, which the
 *	responder has not yet taken: it drops what comes after it unanswered
 * @nak_psn: that PSN
 * @srtt_ns: smoothed round-trip time (RFC 6298), 0 before the first sample
 * @rtt_start_ns: when the packet being timed left, 0 when none is
 * @rtt_jiffy: the jiffy the last sample started in: one a jiffy at most
 * @rtt_psn: the timed packet's PSN: the sample ends when an answer passes it
 * @high_psn: PSN after the newest packet ever sent: only packets sent for
 *	the first time are timed (Karn's rule)
 * @gap_psn: the read response last asked again at a gap
 * @gap_reasked: @gap_psn is valid
 * @read_held: responses of the read at @held_wqe that came ahead of
 *	@held_psn, the one it awaits, and were placed: bit i for PSN
 *	@held_psn + i (bit 0 is never set)
 * @held_wqe: the read @read_held belongs to, while it is the head
 * @held_psn: the response it awaited when @read_held was last changed
 * @ssn: messages started (the SSN of the last one), for credits
 * @lsn: limit sequence number (IBA 9.7.7.2): the last message the
 *	responder's credits cover; one more may go, to probe
 * @credit_unlimited: the responder gave no credit count (an SRQ, rdma_rxe):
 *	@lsn no longer holds anything back
 * @credit_wait: held back by @lsn since it last moved (counted once)
 * @credit_probe: a message started beyond @lsn: nothing goes from
 *	@credit_probe_end on until @credit_probe_psn, the PSN of its packet
 *	that takes a receive WQE, is acknowledged
 * @credit_probe_psn: that PSN
 * @credit_probe_end: the PSN after the packet that last carried it (a
 *	unit of several PSNs in loopback), or after it before it first went
 * @polling: a poll session is on: the QP is on the poll list of @poller,
 *	@poll_cpu's (sroce_sq.c)
 * @poll_watching: the poller runs, on a CPU it has to itself, and watches
 *	the ring: no doorbell is armed (until then posts ring as usual)
 * @poll_backoff: poll sessions in a row that took nothing (nothing was
 *	posted, another task had the CPU, or the poller did not run)
 * @poll_skip: drains left that arm the doorbell before polling is tried
 *	again: 2^@poll_backoff - 1 after a fruitless session
 * @poll_cpu: the CPU the poller runs on: kept while sessions save
 *	doorbells without yielding, else the next one online
 * @poller: the poller of the session on, or of the last one
 * @poll_barred: no session may start: the QP is being quiesced, until the
 *	move to RESET (or for good, when it dies)
 * @poll_node: on @poller's list while @polling, else empty; under its lock
 * @poll_fruit_ns: local_clock() when a poll pass last took posts; written
 *	by the poller without req_lock
 * @poll_more: the poller's last pass stopped at its budget
 * @poll_fruitful: the session took posts
 *	(both set when a session starts, then written by its poller only,
 *	without req_lock)
 * @db_idle_ns: local_clock() when the kernel last finished sending what
 *	was posted (a doorbell's own sending, or req_work's)
 * @db_cost_ns: how long that sending took
 * @db_cq_cons: the send CQ's consumer index at the last doorbell
 * @db_streak: doorbells in a row that came sooner after @db_idle_ns than
 *	half of @db_cost_ns: user space is streaming
 * @handoff_skip: streaming doorbells left that send inline, after a
 *	worker that did not get to run
 * @handoff_mark: @fetched and @psn when handoff_watchdog last looked
 * @handoff_ns: local_clock() of the doorbell that handed off
 *	(these are hints, read and written without req_lock by
 *	sroce_sq_doorbell(), req_work and handoff_watchdog)
 * @shadow: kernel copies of the send WQEs, the SQ's stride apart
 * @st: per-slot state of the WQEs in @shadow
 * @train: packets of the pass under way, held to leave as one train
 *	(sroce_tx_train_add()); empty between passes
 */
struct sroce_req {
	u32 fetched;
	u32 head;
	u32 next;
	u32 started;
	u32 off;
	u32 sge;
	u32 sge_off;
	u32 psn;
	u32 una;
	u32 rd_pending;
	u32 since_ackreq;
	u8 retry_left;
	u8 rnr_left;
	bool rnr_wait;
	u32 timer_una;
	u32 timer_psn;
	bool timer_probe;
	u64 timer_ns;
	u64 stalled_ns;
	bool probe_ackreq;
	bool probed;
	bool rto_hold;
	bool rto_sent;
	bool nak_recovery;
	u32 nak_psn;
	u32 srtt_ns;
	u64 rtt_start_ns;
	unsigned long rtt_jiffy;
	u32 rtt_psn;
	u32 high_psn;
	u32 gap_psn;
	bool gap_reasked;
	u64 read_held;
	u32 held_wqe;
	u32 held_psn;
	u32 ssn;
	u32 lsn;
	bool credit_unlimited;
	bool credit_wait;
	bool credit_probe;
	u32 credit_probe_psn;
	u32 credit_probe_end;
	bool polling;
	bool poll_watching;
	u8 poll_backoff;
	u16 poll_skip;
	int poll_cpu;
	struct sroce_sq_poller *poller;
	bool poll_barred;
	struct list_head poll_node;
	u64 poll_fruit_ns;
	bool poll_more;
	bool poll_fruitful;
	u64 db_idle_ns;
	u32 db_cost_ns;
	u32 db_cq_cons;
	u8 db_streak;
	u8 handoff_skip;
	u64 handoff_mark;
	u64 handoff_ns;
	void *shadow;
	struct sroce_swqe_state *st;
	struct sroce_tx_train train;
};

/* Replies a responder queues: read responses and atomic acknowledgments. */
enum sroce_reply_kind {
	SROCE_REPLY_READ,
	SROCE_REPLY_ATOMIC,
};

/*
 * A reply the responder still has to send. Replies leave in PSN order, so
 * ACKs for later requests wait behind them (see &sroce_resp.aeth_valid).
 */
struct sroce_reply {
	enum sroce_reply_kind kind;
	u32 psn;		/* PSN of the next packet */
	u64 va;			/* read: where the next payload comes from */
	u32 rkey;
	u32 left;		/* read: bytes still to send */
	bool first;		/* read: no response packet sent yet */
	u64 orig;		/* atomic: the value before the operation */
};

/*
 * A read, atomic, ATOMIC WRITE or FLUSH the responder executed, kept so
 * that a duplicate of it, and nothing else behind the expected PSN, is
 * answered again (IBA 9.9.1.1: a duplicate that matches no request is
 * dropped). An atomic is answered from here, not executed again.
 */
struct sroce_rd_record {
	u32 psn;		/* its first PSN */
	u32 npsn;		/* PSNs it took: for a read, one per response */
	u8 op;			/* SROCE_OP_* of the request */
	bool valid;
	u32 rkey;		/* read: what was asked for */
	u64 va;
	u32 len;
	u64 orig;		/* atomic: the value before the operation */
};

#define SROCE_REPLY_SLOTS	(2 * SROCE_MAX_RD_ATOMIC)
/*
 * Executed reads, atomics, ATOMIC WRITEs and FLUSHes remembered for their
 * duplicates: more than can be outstanding, since a peer may count ATOMIC
 * WRITE and FLUSH outside its read limit.
 */
#define SROCE_RD_RECORDS	(4 * SROCE_MAX_RD_ATOMIC)

/**
 * struct sroce_resp - responder state, under &sroce_qp.resp_lock.
 * @epsn: expected PSN
 * @msn: messages completed
 * @nak_seq_sent: a sequence NAK for @epsn is out; do not repeat it
 * @in_send: a multi-packet SEND is in progress into @rwqe
 * @in_write: a multi-packet RDMA WRITE is in progress
 * @rq_cons: RQ index of the next receive WQE to take
 * @rwqe: copy of the receive WQE a SEND in progress fills
 * @recv_off: bytes placed into @rwqe so far
 * @write_va: where the next WRITE payload goes
 * @write_rkey: the WRITE's rkey
 * @write_left: WRITE bytes still expected
 * @write_len: the WRITE's total length (for WRITE_WITH_IMM completions)
 * @replies: replies waiting to be sent, a ring
 * @rp_head: next reply to send
 * @rp_tail: next free reply slot
 * @aeth_valid: an ACK or RNR NAK waits for @replies to drain
 * @aeth_syn: its syndrome
 * @aeth_psn: its PSN
 * @last_wqe_event: IB_EVENT_QP_LAST_WQE_REACHED was raised (SRQ QPs)
 * @uc_reuse: UC: @rwqe is left from a message lost midway, for the next
 * @rd_done: the last reads, atomics, ATOMIC WRITEs and FLUSHes executed
 * @rd_next: slot of @rd_done for the next one
 * @train: replies of the pass under way, held to leave as one train
 *	(sroce_tx_train_add()); empty between passes
 */
struct sroce_resp {
	u32 epsn;
	u32 msn;
	bool nak_seq_sent;
	bool in_send;
	bool in_write;
	u32 rq_cons;
	struct sroce_recv_wqe *rwqe;
	u32 recv_off;
	u64 write_va;
	u32 write_rkey;
	u32 write_left;
	u32 write_len;
	struct sroce_reply replies[SROCE_REPLY_SLOTS];
	u32 rp_head;
	u32 rp_tail;
	bool aeth_valid;
	u8 aeth_syn;
	u32 aeth_psn;
	bool last_wqe_event;
	bool uc_reuse;
	struct sroce_rd_record rd_done[SROCE_RD_RECORDS];
	u32 rd_next;
	struct sroce_tx_train train;
};

/* Who waits in sroce_tx_credit.paused. */
enum {
	SROCE_TX_PAUSED_REQ,
	SROCE_TX_PAUSED_RESP,
};

/**
 * struct sroce_tx_credit - a queue pair's packets still queued below it.
 * @held: those packets, plus one while the queue pair lives
 * @paused: SROCE_TX_PAUSED_* bits: who waits for the packets to drain
 * @cpu: per SROCE_TX_PAUSED_* stream, the CPU it last sent from
 * @qp: the queue pair (RCU); NULL once it is being destroyed
 * @rcu: frees the credit after the last packet and the queue pair
 *
 * Packets can outlive their queue pair in a qdisc or a NIC ring, so the
 * count lives apart from it and goes when both are gone.
 */
struct sroce_tx_credit {
	atomic_t held;
	unsigned long paused;
	int cpu[2];
	struct sroce_qp __rcu *qp;
	struct rcu_head rcu;
};

/**
 * struct sroce_cc_rp - the reaction point's state (DCQCN, sroce_dcqcn.c).
 * @lock: all of it but @limited and @paced; taken after req_lock or
 *	resp_lock, never before them
 * @limited: the QP sends at @rate, not at will; read without the lock
 * @rate: current rate Rc, in Mb/s
 * @target: target rate Rt, in Mb/s
 * @alpha: DCQCN's estimate of congestion, 2^20 being 1
 * @alpha_ns: when @alpha last changed (a CNP, or the periods since)
 * @cut_ns: when the rate was last cut
 * @timer_ns: when the rate increase timer last fired
 * @bytes: bytes sent since the byte counter last fired
 * @t_stage: rate increase timer events since the last cut
 * @b_stage: byte counter events since the last cut
 * @next_tx_ns: when the pacer lets the next packet go
 * @paced: SROCE_TX_PAUSED_* bits: who waits for @pace_timer
 * @pace_timer: wakes them when the pacer allows
 *
 * Times are ktime_get_ns(). The rate rises in arrears: the timer and
 * alpha periods that passed are applied when the state is next used, so
 * no timer runs for them.
 */
struct sroce_cc_rp {
	spinlock_t lock;	/* the rate state */
	bool limited;
	u32 rate;
	u32 target;
	u32 alpha;
	u64 alpha_ns;
	u64 cut_ns;
	u64 timer_ns;
	u64 bytes;
	u32 t_stage;
	u32 b_stage;
	u64 next_tx_ns;
	unsigned long paced;
	struct hrtimer pace_timer;
};

/**
 * struct sroce_qp - a queue pair.
 * @ibqp: the core's QP
 * @lock: serialises modify and query
 * @state: current IBA state; verbs change it under both data-path locks,
 *	the data path moves it to an error state under either one
 * @attr: attributes as last set (qp_state and cap are kept separately)
 * @av: primary path, holding a GID attribute reference while @av_valid
 * @av_valid: @av has been set
 * @cap: capabilities granted at creation
 * @sq_sig_all: every send WQE completes
 * @kernel: created by a kernel consumer, which posts through the verbs
 * @mcast_attached: multicast groups it is attached to (mcast_lock)
 * @mw_bound: type 2 memory windows bound through it (the device's
 *	mw_lock); they are invalidated when it is destroyed
 * @sq_post_lock: serialises kernel posters to @sq
 * @rq_post_lock: serialises kernel posters to @rq
 * @sq: send ring (user or kernel consumer produces)
 * @rq: receive ring (user or kernel consumer produces)
 * @path: packet addressing, set on the way to RTR
 * @credit: its packets queued below it (transmit backpressure)
 * @counters: the counter set its events go to (sroce_qp_count())
 * @mtu: path MTU in bytes
 * @dead: being destroyed: arm no timer, queue no work
 * @req_lock: requester and completer state
 * @req: requester state
 * @resp_lock: responder state
 * @resp: responder state
 * @timer: retransmission and RNR timer
 * @req_work: continues sending where a softirq pass stopped
 * @poll_watchdog: ends a poll session whose poller does not get to run
 * @handoff_watchdog: sends from the poster's CPU what a handoff's worker
 *	does not get to (sroce_sq_handoff_watchdog())
 * @resp_work: sends read responses too large for one softirq pass
 * @err_work: completes everything outstanding after a data-path error
 * @event_work: delivers a kernel QP's async events (@events_pending)
 * @events_pending: enum ib_event_type bits raised and not yet delivered
 * @cnp_sent_ns: when the QP last sent a CNP (ktime_get_ns(), 0 never)
 * @rp: congestion control's rate limiter (RC and UC)
 */
struct sroce_qp {
	struct ib_qp ibqp;
	struct mutex lock;	/* modify and query */
	enum ib_qp_state state;
	struct ib_qp_attr attr;
	struct rdma_ah_attr av;
	bool av_valid;
	struct ib_qp_cap cap;
	bool sq_sig_all;
	bool kernel;
	u32 mcast_attached;
	struct list_head mw_bound;
	spinlock_t sq_post_lock;	/* kernel posters to sq */
	spinlock_t rq_post_lock;	/* kernel posters to rq */
	struct sroce_ring sq;
	struct sroce_ring rq;
	struct sroce_path path;
	struct sroce_tx_credit *credit;
	struct sroce_pcpu_counters __percpu *counters;
	u32 mtu;
	bool dead;
	spinlock_t req_lock;	/* requester */
	struct sroce_req req;
	spinlock_t resp_lock;	/* responder */
	struct sroce_resp resp;
	struct hrtimer timer;
	struct work_struct req_work;
	struct hrtimer poll_watchdog;
	struct hrtimer handoff_watchdog;
	struct work_struct resp_work;
	struct work_struct err_work;
	struct work_struct event_work;
	unsigned long events_pending;
	atomic64_t cnp_sent_ns;
	struct sroce_cc_rp rp;
};

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

/* sroce_qp.c */
int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
/* The driver's own uverbs methods (sroce_uapi.c). */
extern const struct uapi_definition sroce_uapi_defs[];
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
void sroce_qp_set_error(struct sroce_qp *qp);
void sroce_qp_sq_doorbell(struct sroce_qp *qp);
void sroce_qp_rq_doorbell(struct sroce_qp *qp);
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);
void sroce_qp_set_sq_error(struct sroce_qp *qp);
void sroce_qp_bad_ring(struct sroce_qp *qp);
struct sroce_qp *sroce_qp_lookup_rcu(struct sroce_dev *sdev, u32 qpn);

/*
 * Queue pair state as the data path sees it. Verbs change it under both
 * data-path locks; the data path only moves it to an error state, under
 * either lock (sroce_qp_set_error(), sroce_qp_set_sq_error()), so a
 * holder of one lock sees it stable except for that move.
 */
static inline enum ib_qp_state sroce_qp_state(struct sroce_qp *qp)
{
	return READ_ONCE(qp->state);
}

/*
 * Count an event of @qp: on the device, or on the rdma counter the QP is
 * bound to (sroce_counters.c). The RCU read side keeps a set being
 * unbound alive until the increment is done.
 */
static inline void sroce_qp_count_add(struct sroce_qp *qp,
				      enum sroce_counter c, u32 n)
{
	rcu_read_lock();
	this_cpu_add(READ_ONCE(qp->counters)->cnt[c], n);
	rcu_read_unlock();
}

static inline void sroce_qp_count(struct sroce_qp *qp, enum sroce_counter c)
{
	sroce_qp_count_add(qp, c, 1);
}

/* RC and UC talk to one peer, along a path set on the way to RTR. */
static inline bool sroce_qp_connected(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC;
}

/* PSNs a SEND or WRITE takes, or a READ's responses: one per path MTU. */
static inline u32 sroce_msg_npsn(const struct sroce_qp *qp, u32 len)
{
	return max_t(u32, 1, DIV_ROUND_UP(len, qp->mtu));
}

/* The payload of a unit of the device's loop (SROCE_LO_UNIT_NPSN): whole MTUs. */
static inline u32 sroce_lo_unit_bytes(const struct sroce_qp *qp)
{
	return rounddown(min_t(u32, SROCE_LO_UNIT_NPSN * qp->mtu,
			       SROCE_LO_UNIT_BYTES), qp->mtu);
}

/* Compare 24-bit PSNs: negative, zero or positive as a is before b. */
static inline int sroce_psn_cmp(u32 a, u32 b)
{
	return (s32)((a - b) << 8);
}

/* sroce_mcast.c */
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void sroce_mcast_detach_all(struct sroce_qp *qp);
bool sroce_mcast_has(struct sroce_dev *sdev, const union ib_gid *gid);
void sroce_mcast_rcv(struct sroce_dev *sdev, struct sroce_pkt *pkt);

/* sroce_kverbs.c */
int sroce_kpost_send(struct sroce_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr);
int sroce_kpost_recv(struct sroce_qp *qp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr);
int sroce_kpost_recv_ring(struct sroce_ring *ring, spinlock_t *lock,
			  u32 max_sge, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr);
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);

/* sroce_ud.c */
void sroce_ud_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt);

/* sroce_rq.c */
void sroce_recv_wqe_copy(struct sroce_dev *sdev, const struct sroce_ring *ring,
			 u32 idx, u32 max_sge, struct sroce_recv_wqe *dst);
bool sroce_rq_take(struct sroce_qp *qp);
void sroce_rq_release(struct sroce_qp *qp);
void sroce_rq_flush(struct sroce_qp *qp);
void sroce_rq_reset(struct sroce_qp *qp);
int sroce_rq_create(struct sroce_qp *qp, u32 num_wr, u32 wqe_size,
		    u32 copy_size, struct ib_ucontext *uctx);
void sroce_rq_destroy(struct sroce_qp *qp);

/* sroce_resp.c */
void sroce_resp_init(struct sroce_qp *qp);
void sroce_resp_reset(struct sroce_qp *qp);
void sroce_resp_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt);
void sroce_resp_work(struct work_struct *work);
void sroce_resp_flush(struct sroce_qp *qp);

#endif /* SROCE_QP_H */
