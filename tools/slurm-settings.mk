# Slurm settings of `make grade SLURM=1` (grader/grader.mk) and of a lab folder's `make check
# SLURM=1` (labs/lab.mk); grader/README.md, "Grading on a cluster". The kit's cluster.mk, which
# an instructor may ship with a handout, sets them for a cluster (e.g. SLURM = 1 and
# SLURM_GRES = gpu:1); the command line overrides it (SLURM=0 runs here).
-include $(LK_TOP)/cluster.mk
SLURM ?=
SLURM_PARTITION ?=
SLURM_GRES ?=
SLURM_GPUS_PER_TASK ?=
# Cores per task: lab 07's MPI ranks and the builds ahead of a student's next labs each want
# one; a task held to one core would time lab 07's ranks sharing it.
SLURM_CPUS_PER_TASK ?= 4
SLURM_TIME ?=
# Students a grading task grades, on its one GPU: more than one lets the builds of the next
# student run while the GPU times the one before (grader/README.md says what that buys).
SLURM_STUDENTS_PER_TASK ?= 1
SLURM_ACCOUNT ?=
SLURM_WAIT ?= 1
# The settings as a recipe's environment for tools/slurm-grade.sh and tools/slurm-run.sh.
LK_SLURM_ENV = SLURM_PARTITION='$(SLURM_PARTITION)' SLURM_GRES='$(SLURM_GRES)' \
  SLURM_GPUS_PER_TASK='$(SLURM_GPUS_PER_TASK)' \
  SLURM_CPUS_PER_TASK='$(SLURM_CPUS_PER_TASK)' SLURM_TIME='$(SLURM_TIME)' \
  SLURM_STUDENTS_PER_TASK='$(SLURM_STUDENTS_PER_TASK)' \
  SLURM_ACCOUNT='$(SLURM_ACCOUNT)' SLURM_WAIT='$(SLURM_WAIT)'
