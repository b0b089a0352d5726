// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Protection domains: a number each, counted against the device's limit. */
#include "sroce.h"

int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_pd *spd = to_spd(ibpd);
	struct sroce_alloc_pd_resp resp = {};
	int pdn, err;

	if (!sroce_udata_input_ok(udata))
		return -EINVAL;

	spd->user = udata;
	if (!sroce_budget_take(&sdev->num_pd, sdev->max_pd, spd->user))
		return -ENOMEM;
	pdn = ida_alloc_range(&sdev->pd_ida, 1, SROCE_MAX_PD, GFP_KERNEL);
	if (pdn < 0) {
		err = pdn == -ENOSPC ? -ENOMEM : pdn;
		goto err_budget;
	}
	spd->pdn = pdn;

	if (udata) {
		resp.pdn = pdn;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_ida;
	}
	return 0;

err_ida:
	ida_free(&sdev->pd_ida, pdn);
err_budget:
	sroce_budget_put(&sdev->num_pd, spd->user);
	return err;
}

int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_pd *spd = to_spd(ibpd);

	ida_free(&sdev->pd_ida, spd->pdn);
	sroce_budget_put(&sdev->num_pd, spd->user);
	return 0;
}
