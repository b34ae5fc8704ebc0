//go:build unix && !linux

package pdfium

// mapNoReserve is Linux's alone.
const mapNoReserve = 0
