package pdfium

import "syscall"

// mapNoReserve asks Linux not to reserve swap for the mapping.
const mapNoReserve = syscall.MAP_NORESERVE
