! SPDX-License-Identifier: BSD-3-Clause
! Small Fortran Alltoall program (use mpi) for the trace tests: MPI_ALLTOALL of
! N integers per block, then reads the received blocks forward (0..P-1) or in
! reverse and checks every value.
!   alltoall_f [N [ITERS [fwd|rev [corrupt]]]]
program alltoall_f
    use mpi
    implicit none
    integer :: ierr, rank, np, n, iters, it, i, j, k, blk, nargs, stat
    integer, allocatable :: sbuf(:), rbuf(:)
    character(len=32) :: arg, order, tc, tt
    logical :: ok, all_ok, corrupt
    double precision :: t0, t1, tcoll, ttotal
    integer(kind=8) :: total

    call MPI_INIT(ierr)
    call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
    call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
    n = 1024
    iters = 3
    order = 'fwd'
    corrupt = .false.
    nargs = command_argument_count()
    if (nargs >= 1) then
        call get_command_argument(1, arg)
        read (arg, *, iostat=stat) n
        if (stat /= 0 .or. n < 1 .or. n > 67108864) call usage(rank)
    end if
    if (nargs >= 2) then
        call get_command_argument(2, arg)
        read (arg, *, iostat=stat) iters
        if (stat /= 0 .or. iters < 1) call usage(rank)
    end if
    if (nargs >= 3) call get_command_argument(3, order)
    if (order /= 'fwd' .and. order /= 'rev') call usage(rank)
    if (nargs >= 4) then
        call get_command_argument(4, arg)
        corrupt = arg == 'corrupt'
        if (.not. corrupt) call usage(rank)
    end if

    allocate (sbuf(n * np), rbuf(n * np))
    ok = .true.
    tcoll = 0
    ttotal = 0
    do it = 1, iters
        do j = 0, np - 1
            do i = 1, n
                sbuf(j * n + i) = expected(rank, j, i, it)
            end do
        end do
        call MPI_BARRIER(MPI_COMM_WORLD, ierr)
        t0 = MPI_WTIME()
        call MPI_ALLTOALL(sbuf, n, MPI_INTEGER, rbuf, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
        t1 = MPI_WTIME()
        if (corrupt .and. it == 1 .and. rank == np - 1) rbuf(1) = rbuf(1) + 1
        total = 0
        do k = 0, np - 1
            blk = k
            if (order == 'rev') blk = np - 1 - k
            do i = 1, n
                if (rbuf(blk * n + i) /= expected(blk, rank, i, it)) ok = .false.
                total = total + rbuf(blk * n + i)
            end do
        end do
        tcoll = tcoll + (t1 - t0)
        ttotal = ttotal + (MPI_WTIME() - t0)
    end do
    call MPI_ALLREDUCE(ok, all_ok, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        write (tc, '(f12.6)') tcoll / iters
        write (tt, '(f12.6)') ttotal / iters
        write (*, '(a,i0,a,a,a,i0,a,i0,a,a,a,a,a,a)') 'RESULT app=alltoall_f variant=plain n=', n, &
            ' order=', trim(order), ' np=', np, ' iters=', iters, ' t_coll=', trim(adjustl(tc)), &
            ' t_total=', trim(adjustl(tt)), ' check=', trim(merge('ok  ', 'fail', all_ok))
    end if
    deallocate (sbuf, rbuf)
    call MPI_FINALIZE(ierr)
    if (.not. all_ok) stop 1

contains

    integer function expected(src, dst, i, it)
        integer, intent(in) :: src, dst, i, it
        expected = mod(src * 7919 + dst * 104729 + i * 31 + it * 1000003, 2000000011)
    end function expected

    subroutine usage(r)
        integer, intent(in) :: r
        integer :: e
        if (r == 0) write (0, '(a)') 'error: usage: alltoall_f [N [ITERS [fwd|rev [corrupt]]]]'
        call MPI_FINALIZE(e)
        stop 2
    end subroutine usage
end program alltoall_f
