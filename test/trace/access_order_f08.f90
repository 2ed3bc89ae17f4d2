! SPDX-License-Identifier: BSD-3-Clause
! A Fortran program on the mpi_f08 module with two MPI_Alltoall call
! sites: one in the main program, whose blocks are read in the order given
! on the command line (e.g. 1,0), and one in a subroutine, read backwards.
! Under MPICH the module's procedures (mpi_alltoall_f08ts_) call the C
! MPI_Alltoall from MPICH's own library: each site must still be the
! program's own (core/callsite.c).
module exchange_f08
  use mpi_f08
  implicit none
  integer, parameter :: blk = 2048          ! default integers per block (8 KiB)
contains
  subroutine fill(sbuf, rank, nprocs, it)
    integer, intent(out) :: sbuf(:)
    integer, intent(in) :: rank, nprocs, it
    integer :: b, i
    do b = 0, nprocs - 1
      do i = 1, blk
        sbuf(b * blk + i) = rank * 100000 + b * 1000 + it * 10 + mod(i, 7)
      end do
    end do
  end subroutine fill

  ! Counts the wrong values of block b.
  integer function wrong(rbuf, b, rank, it)
    integer, intent(in) :: rbuf(:), b, rank, it
    integer :: i
    wrong = 0
    do i = 1, blk
      if (rbuf(b * blk + i) /= b * 100000 + rank * 1000 + it * 10 + mod(i, 7)) wrong = wrong + 1
    end do
  end function wrong

  ! The second site: every block read, last first.
  subroutine backwards(sbuf, rbuf, rank, nprocs, it, bad)
    integer, intent(inout) :: sbuf(:), rbuf(:), bad
    integer, intent(in) :: rank, nprocs, it
    integer :: b
    call fill(sbuf, rank, nprocs, it + 5)
    call MPI_Alltoall(sbuf, blk, MPI_INTEGER, rbuf, blk, MPI_INTEGER, MPI_COMM_WORLD)
    do b = nprocs - 1, 0, -1
      bad = bad + wrong(rbuf, b, rank, it + 5)
    end do
  end subroutine backwards
end module exchange_f08

program access_order_f08
  use mpi_f08
  use exchange_f08
  implicit none
  integer :: rank, nprocs, it, k, bad, allbad, iters
  integer, allocatable :: sbuf(:), rbuf(:), order(:)
  character(len=64) :: arg
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  allocate(sbuf(blk * nprocs), rbuf(blk * nprocs), order(nprocs))
  call get_command_argument(1, arg)
  read(arg, *) order
  call get_command_argument(2, arg)
  read(arg, *) iters
  bad = 0
  do it = 1, iters
    call fill(sbuf, rank, nprocs, it)
    call MPI_Alltoall(sbuf, blk, MPI_INTEGER, rbuf, blk, MPI_INTEGER, MPI_COMM_WORLD)
    do k = 1, nprocs
      bad = bad + wrong(rbuf, order(k), rank, it)
    end do
    call backwards(sbuf, rbuf, rank, nprocs, it, bad)
  end do
  allbad = 0
  call MPI_Reduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0) then
    if (allbad == 0) then
      print '(a)', 'access_order_f08: ok'
    else
      print '(a,i0)', 'access_order_f08: FAILED ', allbad
    end if
  end if
  call MPI_Finalize()
  if (rank == 0 .and. allbad /= 0) stop 1
end program access_order_f08
