! SPDX-License-Identifier: BSD-3-Clause
! Own case, Fortran (`use mpi`): receive buffers in memory exposed by
! MPI_WIN_CREATE, read by the neighbour with MPI_GET right after the
! collective, in a fence epoch and in a passive-target epoch the target
! takes no part in. Open MPI's Fortran MPI_WIN_CREATE calls PMPI_Win_create
! itself: tnbc learns of the window through its Fortran symbols
! (core/wrap_fortran.c), else a guard on the window hangs the reader.
program window_recv_f
  use mpi
  implicit none
  integer, parameter :: n = 65536
  integer :: ierr, me, np, peer, per, it, i, win
  integer, allocatable :: s(:), r(:), got(:)
  integer(kind=8) :: h, all(64)
  integer(kind=MPI_ADDRESS_KIND) :: bytes, disp
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  peer = mod(me + 1, np)
  per = n / np
  allocate(s(n), r(n), got(per))
  bytes = int(n, MPI_ADDRESS_KIND) * 4
  call MPI_Win_create(r, bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  h = 0
  do it = 0, 2
    do i = 1, n
      s(i) = me * 1000003 + i * 7 + it * 31
    end do
    call MPI_Alltoall(s, per, MPI_INTEGER, r, per, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call MPI_Win_fence(0, win, ierr)
    disp = int(mod(it, np) * per, MPI_ADDRESS_KIND)
    call MPI_Get(got, per, MPI_INTEGER, peer, disp, per, MPI_INTEGER, win, ierr)
    call MPI_Win_fence(0, win, ierr)
    h = h * 31 + sum(int(got, 8))
    do i = 1, n
      s(i) = me * 7 + i * 3 - it
    end do
    call MPI_Alltoall(s, per, MPI_INTEGER, r, per, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win, ierr)
    call MPI_Get(got, per, MPI_INTEGER, peer, disp, per, MPI_INTEGER, win, ierr)
    call MPI_Win_unlock(peer, win, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    h = h * 31 + sum(int(got, 8)) + sum(int(r, 8))
  end do
  call MPI_Win_free(win, ierr)
  call MPI_Gather(h, 1, MPI_INTEGER8, all, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  if (me == 0) then
    do i = 1, np
      print '(a,i0,a,i0)', 'rank ', i - 1, ' hash ', all(i)
    end do
  end if
  deallocate(s, r, got)
  call MPI_Finalize(ierr)
end program window_recv_f
