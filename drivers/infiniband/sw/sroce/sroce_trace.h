/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The "sroce" trace system: queue pair state changes, retransmissions
 * with their cause, received packets dropped with their reason, NAKs
 * sent, and user doorbells. Each event names the device and the queue
 * pair, so a trace of one flow can be cut out of a busy device.
 *
 * Strings are fixed arrays: __string()/__assign_str() changed between
 * the kernels sroce builds for.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SROCE_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
#include "sroce.h"
#include "sroce_hdr.h"

#define SROCE_TRACE_REASON_LEN	32

TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);

#define sroce_show_qp_state(s)					\
	__print_symbolic(s,					\
			 { IB_QPS_RESET, "RESET" },		\
			 { IB_QPS_INIT, "INIT" },		\
			 { IB_QPS_RTR, "RTR" },			\
			 { IB_QPS_RTS, "RTS" },			\
			 { IB_QPS_SQD, "SQD" },			\
			 { IB_QPS_SQE, "SQE" },			\
			 { IB_QPS_ERR, "ERR" })

TRACE_DEFINE_ENUM(SROCE_RETX_TIMEOUT);
TRACE_DEFINE_ENUM(SROCE_RETX_SEQ_NAK);
TRACE_DEFINE_ENUM(SROCE_RETX_READ_GAP);
TRACE_DEFINE_ENUM(SROCE_RETX_RNR);
TRACE_DEFINE_ENUM(SROCE_RETX_PROBE);

#define sroce_show_retx_cause(c)				\
	__print_symbolic(c,					\
			 { SROCE_RETX_TIMEOUT, "timeout" },	\
			 { SROCE_RETX_SEQ_NAK, "seq_nak" },	\
			 { SROCE_RETX_READ_GAP, "read_gap" },	\
			 { SROCE_RETX_RNR, "rnr" },		\
			 { SROCE_RETX_PROBE, "probe" })

TRACE_DEFINE_ENUM(SROCE_NAK_PSN_SEQ);
TRACE_DEFINE_ENUM(SROCE_NAK_INV_REQ);
TRACE_DEFINE_ENUM(SROCE_NAK_REM_ACCESS);
TRACE_DEFINE_ENUM(SROCE_NAK_REM_OP);

/* A NAK's code: the low bits of its AETH syndrome. */
#define sroce_show_nak_code(code)				\
	__print_symbolic(code,					\
			 { SROCE_NAK_PSN_SEQ, "psn_seq" },	\
			 { SROCE_NAK_INV_REQ, "inv_req" },	\
			 { SROCE_NAK_REM_ACCESS, "rem_access" },	\
			 { SROCE_NAK_REM_OP, "rem_op" })

TRACE_EVENT(sroce_qp_state,
	    TP_PROTO(const struct ib_qp *ibqp, enum ib_qp_state from,
		     enum ib_qp_state to),
	    TP_ARGS(ibqp, from, to),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(u32, from)
			     __field(u32, to)),
	    TP_fast_assign(strscpy(__entry->dev, dev_name(&ibqp->device->dev),
				   IB_DEVICE_NAME_MAX);
			   __entry->qpn = ibqp->qp_num;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("dev=%s qpn=%u %s -> %s", __entry->dev, __entry->qpn,
		      sroce_show_qp_state(__entry->from),
		      sroce_show_qp_state(__entry->to))
);

TRACE_EVENT(sroce_retransmit,
	    TP_PROTO(const struct ib_qp *ibqp, u32 psn, u32 cause),
	    TP_ARGS(ibqp, psn, cause),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u32, cause)),
	    TP_fast_assign(strscpy(__entry->dev, dev_name(&ibqp->device->dev),
				   IB_DEVICE_NAME_MAX);
			   __entry->qpn = ibqp->qp_num;
			   __entry->psn = psn;
			   __entry->cause = cause;),
	    TP_printk("dev=%s qpn=%u psn=%u cause=%s", __entry->dev,
		      __entry->qpn, __entry->psn,
		      sroce_show_retx_cause(__entry->cause))
);

/* @qpn, @psn and @opcode are the packet's, 0 when it was too broken. */
TRACE_EVENT(sroce_rx_drop,
	    TP_PROTO(const struct ib_device *ibdev, const char *reason,
		     u32 qpn, u32 psn, u8 opcode),
	    TP_ARGS(ibdev, reason, qpn, psn, opcode),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __array(char, reason, SROCE_TRACE_REASON_LEN)
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u8, opcode)),
	    TP_fast_assign(strscpy(__entry->dev, dev_name(&ibdev->dev),
				   IB_DEVICE_NAME_MAX);
			   strscpy(__entry->reason, reason,
				   SROCE_TRACE_REASON_LEN);
			   __entry->qpn = qpn;
			   __entry->psn = psn;
			   __entry->opcode = opcode;),
	    TP_printk("dev=%s reason=%s qpn=%u psn=%u opcode=0x%02x",
		      __entry->dev, __entry->reason, __entry->qpn,
		      __entry->psn, __entry->opcode)
);

/* An RNR NAK (its timer code is the QP's min_rnr_timer) or a NAK. */
TRACE_EVENT(sroce_nak_sent,
	    TP_PROTO(const struct ib_qp *ibqp, u32 psn, u8 syndrome),
	    TP_ARGS(ibqp, psn, syndrome),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u8, syndrome)),
	    TP_fast_assign(strscpy(__entry->dev, dev_name(&ibqp->device->dev),
				   IB_DEVICE_NAME_MAX);
			   __entry->qpn = ibqp->qp_num;
			   __entry->psn = psn;
			   __entry->syndrome = syndrome;),
	    TP_printk("dev=%s qpn=%u psn=%u kind=%s code=%s value=%u",
		      __entry->dev, __entry->qpn, __entry->psn,
		      (__entry->syndrome & SROCE_AETH_KIND_MASK) ==
		      SROCE_AETH_RNR_NAK ? "rnr" : "nak",
		      (__entry->syndrome & SROCE_AETH_KIND_MASK) ==
		      SROCE_AETH_RNR_NAK ? "rnr_timer" :
		      sroce_show_nak_code(__entry->syndrome &
					  SROCE_AETH_VAL_MASK),
		      __entry->syndrome & SROCE_AETH_VAL_MASK)
);

TRACE_EVENT(sroce_doorbell,
	    TP_PROTO(const struct ib_qp *ibqp, bool send),
	    TP_ARGS(ibqp, send),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(bool, send)),
	    TP_fast_assign(strscpy(__entry->dev, dev_name(&ibqp->device->dev),
				   IB_DEVICE_NAME_MAX);
			   __entry->qpn = ibqp->qp_num;
			   __entry->send = send;),
	    TP_printk("dev=%s qpn=%u queue=%s", __entry->dev, __entry->qpn,
		      __entry->send ? "send" : "recv")
);

#endif /* SROCE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sroce_trace
#include <trace/define_trace.h>
