/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The rest of rdma-core 44's libibverbs ABI: entry points that need a
 * kernel device (ibv_cmd_*, imports, provider registration) and
 * multicast (address handles and SRQs are in objects.c). They exist
 * because programs and the providers perftest links (libmlx5, libefa)
 * bind every symbol at load time; they refuse with
 * EOPNOTSUPP, or do nothing where refusing would stop a program that
 * merely loads them (a provider registering itself).
 *
 * Written without <infiniband/verbs.h>: only the calling convention
 * matters (integer or pointer results), not the argument types.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

/* libmlx5 reads it: destroying objects of a disassociated device fails */
EXPORT bool verbs_allow_disassociate_destroy;

EXPORT int __ioctl_final_num_attrs(void);
int
__ioctl_final_num_attrs(void)
{
	return 0;
}

EXPORT void __verbs_log(void);
void
__verbs_log(void)
{
}

EXPORT void *_verbs_init_and_alloc_context(void);
void *
_verbs_init_and_alloc_context(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int execute_ioctl(void);
int
execute_ioctl(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_attach_mcast(void);
int
ibv_attach_mcast(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_advise_mr(void);
int
ibv_cmd_advise_mr(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_alloc_dm(void);
int
ibv_cmd_alloc_dm(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_alloc_mw(void);
int
ibv_cmd_alloc_mw(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_alloc_pd(void);
int
ibv_cmd_alloc_pd(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_attach_mcast(void);
int
ibv_cmd_attach_mcast(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_close_xrcd(void);
int
ibv_cmd_close_xrcd(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_ah(void);
int
ibv_cmd_create_ah(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_counters(void);
int
ibv_cmd_create_counters(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_cq(void);
int
ibv_cmd_create_cq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_cq_ex(void);
int
ibv_cmd_create_cq_ex(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_flow(void);
int
ibv_cmd_create_flow(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_flow_action_esp(void);
int
ibv_cmd_create_flow_action_esp(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_qp(void);
int
ibv_cmd_create_qp(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_qp_ex(void);
int
ibv_cmd_create_qp_ex(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_qp_ex2(void);
int
ibv_cmd_create_qp_ex2(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_rwq_ind_table(void);
int
ibv_cmd_create_rwq_ind_table(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_srq(void);
int
ibv_cmd_create_srq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_srq_ex(void);
int
ibv_cmd_create_srq_ex(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_create_wq(void);
int
ibv_cmd_create_wq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_dealloc_mw(void);
int
ibv_cmd_dealloc_mw(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_dealloc_pd(void);
int
ibv_cmd_dealloc_pd(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_dereg_mr(void);
int
ibv_cmd_dereg_mr(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_destroy_ah(void);
int
ibv_cmd_destroy_ah(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_destroy_counters(void);
int
ibv_cmd_destroy_counters(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_destroy_cq(void);
int
ibv_cmd_destroy_cq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_destroy_flow(void);
int
ibv_cmd_destroy_flow(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_destroy_flow_action(void);
int
ibv_cmd_destroy_flow_action(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_destroy_qp(void);
int
ibv_cmd_destroy_qp(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_destroy_rwq_ind_table(void);
int
ibv_cmd_destroy_rwq_ind_table(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_destroy_srq(void);
int
ibv_cmd_destroy_srq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_destroy_wq(void);
int
ibv_cmd_destroy_wq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_detach_mcast(void);
int
ibv_cmd_detach_mcast(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_free_dm(void);
int
ibv_cmd_free_dm(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_get_context(void);
int
ibv_cmd_get_context(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_modify_cq(void);
int
ibv_cmd_modify_cq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_modify_flow_action_esp(void);
int
ibv_cmd_modify_flow_action_esp(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_modify_qp(void);
int
ibv_cmd_modify_qp(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_modify_qp_ex(void);
int
ibv_cmd_modify_qp_ex(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_modify_srq(void);
int
ibv_cmd_modify_srq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_modify_wq(void);
int
ibv_cmd_modify_wq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_open_qp(void);
int
ibv_cmd_open_qp(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_open_xrcd(void);
int
ibv_cmd_open_xrcd(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_poll_cq(void);
int
ibv_cmd_poll_cq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_post_recv(void);
int
ibv_cmd_post_recv(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_post_send(void);
int
ibv_cmd_post_send(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_post_srq_recv(void);
int
ibv_cmd_post_srq_recv(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_query_context(void);
int
ibv_cmd_query_context(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_query_device_any(void);
int
ibv_cmd_query_device_any(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_query_mr(void);
int
ibv_cmd_query_mr(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_query_port(void);
int
ibv_cmd_query_port(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_query_qp(void);
int
ibv_cmd_query_qp(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_query_srq(void);
int
ibv_cmd_query_srq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_read_counters(void);
int
ibv_cmd_read_counters(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_reg_dm_mr(void);
int
ibv_cmd_reg_dm_mr(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_reg_dmabuf_mr(void);
int
ibv_cmd_reg_dmabuf_mr(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_reg_mr(void);
int
ibv_cmd_reg_mr(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_req_notify_cq(void);
int
ibv_cmd_req_notify_cq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_rereg_mr(void);
int
ibv_cmd_rereg_mr(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_cmd_resize_cq(void);
int
ibv_cmd_resize_cq(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT void ibv_copy_ah_attr_from_kern(void);
void
ibv_copy_ah_attr_from_kern(void)
{
}

EXPORT void ibv_copy_path_rec_from_kern(void);
void
ibv_copy_path_rec_from_kern(void)
{
}

EXPORT void ibv_copy_path_rec_to_kern(void);
void
ibv_copy_path_rec_to_kern(void)
{
}

EXPORT void ibv_copy_qp_attr_from_kern(void);
void
ibv_copy_qp_attr_from_kern(void)
{
}

EXPORT int ibv_detach_mcast(void);
int
ibv_detach_mcast(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT void *ibv_get_sysfs_path(void);
void *
ibv_get_sysfs_path(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT void *ibv_import_device(void);
void *
ibv_import_device(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT void *ibv_import_dm(void);
void *
ibv_import_dm(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT void *ibv_import_mr(void);
void *
ibv_import_mr(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT void *ibv_import_pd(void);
void *
ibv_import_pd(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int ibv_query_ece(void);
int
ibv_query_ece(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_query_qp_data_in_order(void);
int
ibv_query_qp_data_in_order(void)
{
	return 0;
}

EXPORT int ibv_read_ibdev_sysfs_file(void);
int
ibv_read_ibdev_sysfs_file(void)
{
	errno = ENOENT;
	return -1;
}

EXPORT int ibv_read_sysfs_file(void);
int
ibv_read_sysfs_file(void)
{
	errno = ENOENT;
	return -1;
}

EXPORT void *ibv_reg_dmabuf_mr(void);
void *
ibv_reg_dmabuf_mr(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int ibv_resolve_eth_l2_from_gid(void);
int
ibv_resolve_eth_l2_from_gid(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT int ibv_set_ece(void);
int
ibv_set_ece(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT void ibv_unimport_dm(void);
void
ibv_unimport_dm(void)
{
}

EXPORT void ibv_unimport_mr(void);
void
ibv_unimport_mr(void)
{
}

EXPORT void ibv_unimport_pd(void);
void
ibv_unimport_pd(void)
{
}

EXPORT void verbs_init_cq(void);
void
verbs_init_cq(void)
{
}

EXPORT void *verbs_open_device(void);
void *
verbs_open_device(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT void verbs_register_driver_34(void);
void
verbs_register_driver_34(void)
{
}

EXPORT void verbs_set_ops(void);
void
verbs_set_ops(void)
{
}

EXPORT void verbs_uninit_context(void);
void
verbs_uninit_context(void)
{
}
