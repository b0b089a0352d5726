// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The "sroce" trace events (sroce_trace.h) are defined here. */
#include "sroce.h"

#define CREATE_TRACE_POINTS
#include "sroce_trace.h"
