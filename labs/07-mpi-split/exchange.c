/* Lab 07: the halo exchange and the gather. This is one of your two files (the other is
   kernels.cu); the handout (README.md) explains the background and the tasks.

   Rules of the lab:
    - every rank calls these functions; a rank at the top or the bottom of the grid has
      MPI_PROC_NULL as its neighbour there (sends and receives to it complete at once);
    - with device memory (s->device) MPI may take device pointers only when s->cuda_aware;
      otherwise copy through the pinned buffers s->send_up ... s->gather_buf;
    - check every CUDA call (LK_CUDA_TRY) and every MPI call's return code. */
#include "lab.h"
#include "labkit/cuda_check.h"

/* TODO 1: lab07_halo_begin (contract in lab.h): post MPI_Irecv for the ghost rows from the
   ranks above and below and MPI_Isend of this slab's first and last LAB07_GHOST owned rows,
   into s->req. Work on the CPU variants first: `mpirun -np 2 ./build/student/lab07
   --variant cpu --dataset sciddicat-odd`.
   TODO 3: when s->device and not s->cuda_aware, first copy the rows to send into
   s->send_up / s->send_down on s->halo, and receive into s->recv_up / s->recv_down. */
int lab07_halo_begin(lab07_slab *s, lk_error *err)
{
    return lk_fail(err, "exchange.c: lab07_halo_begin is not written yet: start with TODO 1 "
                        "(see labs/07-mpi-split/README.md)");
}

/* TODO 2: lab07_halo_end: wait for the requests. TODO 3: when staged, copy the received rows
   into the ghost rows of h and synchronise s->halo. */
int lab07_halo_end(lab07_slab *s, lk_error *err)
{
    return lk_fail(err, "exchange.c: lab07_halo_end is not written yet: TODO 2 "
                        "(see labs/07-mpi-split/README.md)");
}

/* TODO 4: lab07_gather: one MPI_Gatherv of every rank's owned rows into h_root on rank 0
   (counts and displacements from lab07_decompose); staged through s->gather_buf when the
   slab is on the GPU and MPI is not CUDA-aware. */
int lab07_gather(lab07_slab *s, double *h_root, lk_error *err)
{
    return lk_fail(err, "exchange.c: lab07_gather is not written yet: TODO 4 "
                        "(see labs/07-mpi-split/README.md)");
}
