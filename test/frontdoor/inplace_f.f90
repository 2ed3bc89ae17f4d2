! SPDX-License-Identifier: BSD-3-Clause
! MPI_ALLREDUCE with MPI_IN_PLACE from `use mpi`: rank r holds r+1..r+4;
! on 2 ranks rank 0 must print the sums 3 5 7 9. Under MPICH the Fortran
! MPI_IN_PLACE is an address tnbc's Fortran wrappers must recognize.
program inplace
  use mpi
  implicit none
  integer :: ierr, rank, n, i
  integer :: buf(4)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, n, ierr)
  do i = 1, 4
    buf(i) = rank + i
  end do
  call MPI_ALLREDUCE(MPI_IN_PLACE, buf, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print *, 'sum', buf
  call MPI_FINALIZE(ierr)
end program
