! SPDX-License-Identifier: BSD-3-Clause
! A plain Fortran MPI program (use mpi): after MPI_ALLTOALL it reads the
! received blocks in the order given on the command line (e.g. 3,1,0,2).
program access_order_f
  use mpi
  implicit none
  integer, parameter :: blk = 2048          ! default integers per block (8 KiB)
  integer :: ierr, rank, nprocs, it, k, b, i, bad, allbad, iters
  integer, allocatable :: sbuf(:), rbuf(:), order(:)
  character(len=64) :: arg
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  allocate(sbuf(blk * nprocs), rbuf(blk * nprocs), order(nprocs))
  call get_command_argument(1, arg)
  read(arg, *) order
  call get_command_argument(2, arg)
  read(arg, *) iters
  bad = 0
  allbad = 0    ! MPI_REDUCE sets it at the root only
  do it = 1, iters
    do b = 0, nprocs - 1
      do i = 1, blk
        sbuf(b * blk + i) = rank * 100000 + b * 1000 + it * 10 + mod(i, 7)
      end do
    end do
    call MPI_ALLTOALL(sbuf, blk, MPI_INTEGER, rbuf, blk, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    do k = 1, nprocs
      b = order(k)
      do i = 1, blk
        if (rbuf(b * blk + i) /= b * 100000 + rank * 1000 + it * 10 + mod(i, 7)) bad = bad + 1
      end do
    end do
  end do
  allbad = 0   ! only the root receives it; the others test it too
  call MPI_REDUCE(bad, allbad, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (allbad == 0) then
      print '(a)', 'access_order_f: ok'
    else
      print '(a,i0)', 'access_order_f: FAILED ', allbad
    end if
  end if
  call MPI_FINALIZE(ierr)
  ! allbad is defined at the root only (MPI_REDUCE); elsewhere it is garbage
  if (rank == 0 .and. allbad /= 0) stop 1
end program access_order_f
