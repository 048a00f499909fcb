/* sim_models.c -- which table of operations runs which model: the one
 * place that names them all. The engine (sim.c) asks here once, at set
 * up, and from then on calls only through the table (sim_internal.h,
 * struct sim_model_ops); each table is filled in its model's file.
 */
#include "sim/sim_internal.h"

const struct sim_model_ops *sim__model_ops(enum sim_model m)
{
    switch (m) {
    case SIM_BIO:          return &sim__bio_ops;
    case SIM_POOL:         return &sim__pool_ops;
    case SIM_REACTOR:      return &sim__reactor_ops;
    case SIM_MULTIREACTOR: return &sim__multireactor_ops;
    case SIM_VTHREAD:      return &sim__vthread_ops;
    default:               return NULL;
    }
}
