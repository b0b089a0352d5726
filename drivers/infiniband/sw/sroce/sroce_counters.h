/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Device counters (sroce_counters.c): one per event and drop reason.
 */
#ifndef SROCE_COUNTERS_H
#define SROCE_COUNTERS_H

#include <linux/types.h>

/**
 * enum sroce_counter - device counters, exported through rdma statistic.
 * @SROCE_CNT_RX_ROCE_PACKETS: UDP/4791 packets taken from the netdev
 * @SROCE_CNT_RX_DROP_MALFORMED: dropped: lengths, version or pad inconsistent
 * @SROCE_CNT_RX_DROP_BAD_OPCODE: dropped: opcode sroce does not accept
 * @SROCE_CNT_RX_DROP_BAD_PKEY: dropped: P_Key outside the default partition
 * @SROCE_CNT_RX_DROP_BAD_ICRC: dropped: invariant CRC mismatch
 * @SROCE_CNT_RX_DROP_NO_QP: dropped: valid, but no queue pair to take it
 * @SROCE_CNT_RX_DROP_QP_STATE: dropped: the queue pair cannot take it now
 * @SROCE_CNT_RX_DROP_WRONG_PEER: dropped: not from the connected peer
 * @SROCE_CNT_RX_DROP_BAD_QKEY: dropped: datagram with the wrong Q_Key
 * @SROCE_CNT_RX_DROP_NO_RECV: dropped: datagram, no receive WQE posted
 * @SROCE_CNT_RX_QP_PACKETS: valid packets handed to a queue pair (or to
 *	multicast delivery); with the drops before that (malformed to wrong
 *	peer) it adds up to RX_ROCE_PACKETS, and later drops are part of it
 * @SROCE_CNT_RX_DROP_STALE: dropped by a requester: a response outside its
 *	PSN window or matching no outstanding request
 * @SROCE_CNT_RX_DUPLICATE: duplicate requests answered again
 * @SROCE_CNT_RX_OUT_OF_SEQ: requests ahead of the expected PSN
 * @SROCE_CNT_PORT_EVENTS: port state changes dispatched to consumers
 * @SROCE_CNT_TX_PACKETS: packets sent
 * @SROCE_CNT_TX_DROP: packets that could not be built or queued
 * @SROCE_CNT_TX_PAUSE: times a queue pair paused with SROCE_TX_INFLIGHT_HIGH
 *	of its packets still queued below it
 * @SROCE_CNT_RETRANSMIT_TIMEOUT: retransmissions after a local ACK timeout
 * @SROCE_CNT_SEQ_NAK_RCVD: PSN sequence error NAKs received
 * @SROCE_CNT_READ_GAP_REASK: reads asked again from a response missing
 *	in the middle of later ones, without waiting for the timer
 * @SROCE_CNT_RNR_NAK_RCVD: RNR NAKs received
 * @SROCE_CNT_RNR_NAK_SENT: RNR NAKs sent (no receive WQE posted)
 * @SROCE_CNT_CREDIT_WAIT: times a requester held a message back until the
 *	responder's ACKs promised a receive WQE for it (end-to-end credits)
 * @SROCE_CNT_NAK_SENT: error NAKs sent (access, request, operation)
 * @SROCE_CNT_CQ_OVERFLOW: completions lost to a full completion queue
 * @SROCE_CNT_BAD_WQE: work queue entries or indices refused from user space
 * @SROCE_CNT_RX_DROP_DUP_UNMATCHED: dropped by a responder: a read, atomic,
 *	ATOMIC WRITE or FLUSH behind the expected PSN that matches none it
 *	executed (forged, or older than it remembers)
 * @SROCE_CNT_RX_DROP_UC_ERROR: dropped by a UC responder with the rest of
 *	its message: a request it could not execute (UC has no NAK)
 * @SROCE_CNT_RX_GRO_SEGMENTS: packets that arrived merged into one, by UDP
 *	GRO on the netdev or as a sroce sender's train (each also counted in
 *	RX_ROCE_PACKETS), taken one by one
 * @SROCE_CNT_TX_CPU_HANDOFF: sends moved to the CPU that sent the queue
 *	pair's packets still in flight, to keep them in order
 * @SROCE_CNT_SQ_DOORBELL: send doorbells user space rang (system calls)
 * @SROCE_CNT_SQ_POLLED: times a send ring's poller found new entries, each
 *	a doorbell user space did not have to ring (sroce_sq.c)
 * @SROCE_CNT_SQ_POLL_YIELD: poll sessions ended early because another task
 *	wanted the poller's CPU, or kept the poller from running (watchdog)
 * @SROCE_CNT_RX_ECN_CE: packets received marked Congestion Experienced, by
 *	unicast queue pairs (not multicast datagrams, not CNPs)
 * @SROCE_CNT_TX_CNP: congestion notification packets built and handed to
 *	the send path (sroce_cc.c); one the netdev then drops is also tx_drop
 * @SROCE_CNT_RX_CNP: congestion notification packets received
 * @SROCE_CNT_CC_RATE_CUT: times a CNP cut a queue pair's send rate
 *	(sroce_dcqcn.c); CNPs within dcqcn_rate_reduce_period_us of a cut
 *	raise its alpha only
 * @SROCE_CNT_CC_PACE_WAIT: times a queue pair's rate limiter held back a
 *	packet it was about to send (each attempt counts)
 * @SROCE_CNT_TLP_PROBE: tail-loss probes sent: the last unacknowledged
 *	packet again, asking for an ACK, after a quiet 2 * SRTT
 * @SROCE_CNT_READ_RESP_HELD: read responses that came ahead of one still
 *	missing and were kept, not dropped and asked for again
 * @SROCE_CNT_RX_LOCAL_NO_ICRC: packets taken without an ICRC check because
 *	they never crossed a link: still CHECKSUM_PARTIAL, as a veth delivers
 *	what another namespace of this machine sent (sroce_rcv())
 * @SROCE_CNT_TX_LOCAL_NO_ICRC: packets sent without an ICRC because a
 *	sroce device behind a veth takes them unchecked, still
 *	CHECKSUM_PARTIAL (sroce_net_peer_unchecked())
 * @SROCE_CNT_TX_LOCAL_UNITS: packets to a queue pair of the same device
 *	that carried several path MTUs of a SEND, WRITE or READ response,
 *	standing for as many PSNs (SROCE_LO_UNIT_NPSN); each also counts
 *	once in tx_roce_packets
 * @SROCE_CNT_TX_TRAINS: UDP GSO fraglist packets that carried two or more
 *	packets to the peer at once (sroce_tx_train_add()); each packet in
 *	them also counts in tx_roce_packets
 * @SROCE_CNT_SQ_HANDOFF: send doorbells (each also in sq_doorbell) whose
 *	sending went to a worker on the next CPU, because user space was
 *	streaming to a QP of the same device (sroce_sq_doorbell())
 * @SROCE_CNT_SQ_HANDOFF_LATE: times a handed-off stream sent nothing for
 *	50 ms (its worker's CPU taken) and the poster's CPU sent instead
 * @SROCE_CNT_ACK_PAST_RESEND: ACKs that acknowledged packets a resend was
 *	about to send again (the responder had them): sending went on past
 *	them (sroce_comp_skip_acked())
 * @SROCE_NUM_COUNTERS: number of counters
 */
enum sroce_counter {
	SROCE_CNT_RX_ROCE_PACKETS,
	SROCE_CNT_RX_DROP_MALFORMED,
	SROCE_CNT_RX_DROP_BAD_OPCODE,
	SROCE_CNT_RX_DROP_BAD_PKEY,
	SROCE_CNT_RX_DROP_BAD_ICRC,
	SROCE_CNT_RX_DROP_NO_QP,
	SROCE_CNT_RX_DROP_QP_STATE,
	SROCE_CNT_RX_DROP_WRONG_PEER,
	SROCE_CNT_RX_DROP_BAD_QKEY,
	SROCE_CNT_RX_DROP_NO_RECV,
	SROCE_CNT_RX_QP_PACKETS,
	SROCE_CNT_RX_DROP_STALE,
	SROCE_CNT_RX_DUPLICATE,
	SROCE_CNT_RX_OUT_OF_SEQ,
	SROCE_CNT_PORT_EVENTS,
	SROCE_CNT_TX_PACKETS,
	SROCE_CNT_TX_DROP,
	SROCE_CNT_TX_PAUSE,
	SROCE_CNT_RETRANSMIT_TIMEOUT,
	SROCE_CNT_SEQ_NAK_RCVD,
	SROCE_CNT_READ_GAP_REASK,
	SROCE_CNT_RNR_NAK_RCVD,
	SROCE_CNT_RNR_NAK_SENT,
	SROCE_CNT_CREDIT_WAIT,
	SROCE_CNT_NAK_SENT,
	SROCE_CNT_CQ_OVERFLOW,
	SROCE_CNT_BAD_WQE,
	SROCE_CNT_RX_DROP_DUP_UNMATCHED,
	SROCE_CNT_RX_DROP_UC_ERROR,
	SROCE_CNT_RX_GRO_SEGMENTS,
	SROCE_CNT_TX_CPU_HANDOFF,
	SROCE_CNT_SQ_DOORBELL,
	SROCE_CNT_SQ_POLLED,
	SROCE_CNT_SQ_POLL_YIELD,
	SROCE_CNT_RX_ECN_CE,
	SROCE_CNT_TX_CNP,
	SROCE_CNT_RX_CNP,
	SROCE_CNT_CC_RATE_CUT,
	SROCE_CNT_CC_PACE_WAIT,
	SROCE_CNT_TLP_PROBE,
	SROCE_CNT_READ_RESP_HELD,
	SROCE_CNT_RX_LOCAL_NO_ICRC,
	SROCE_CNT_TX_LOCAL_NO_ICRC,
	SROCE_CNT_TX_LOCAL_UNITS,
	SROCE_CNT_TX_TRAINS,
	SROCE_CNT_SQ_HANDOFF,
	SROCE_CNT_SQ_HANDOFF_LATE,
	SROCE_CNT_ACK_PAST_RESEND,
	SROCE_NUM_COUNTERS
};

struct sroce_pcpu_counters {
	u64 cnt[SROCE_NUM_COUNTERS];
};

struct sroce_dev;
struct ib_device;
struct ib_qp;
struct rdma_counter;
struct rdma_hw_stats;

/* sroce_counters.c */
u64 sroce_counter_read(struct sroce_dev *sdev, enum sroce_counter c);
const char *sroce_counter_name(enum sroce_counter c);
struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);
struct rdma_hw_stats *sroce_counter_alloc_stats(struct rdma_counter *counter);
int sroce_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp);
int sroce_counter_unbind_qp(struct ib_qp *ibqp);
int sroce_counter_update_stats(struct rdma_counter *counter);
int sroce_counter_dealloc(struct rdma_counter *counter);

#endif /* SROCE_COUNTERS_H */
