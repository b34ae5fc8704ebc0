package documenttest

import (
	"os"
	"os/exec"
	"testing"
)

// Installed returns path, a file a Debian package installs, when it is
// there. Otherwise the test is skipped, or, under CI=true, fails naming
// the package to install (.ci/run installs it).
func Installed(tb testing.TB, path, pkg string) string {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is missing: install the Debian package %s (apt-get install -y %s)", path, pkg, pkg)
		}
		tb.Skipf("%s is missing: the Debian package %s is not installed", path, pkg)
	}
	return path
}

// Program returns the path of a program a Debian package installs, as
// Installed does for files.
func Program(tb testing.TB, name, pkg string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is missing: install the Debian package %s (apt-get install -y %s)", name, pkg, pkg)
		}
		tb.Skipf("%s is missing: the Debian package %s is not installed", name, pkg)
	}
	return p
}

// Public documents installed by Debian packages: the GNU Bash Reference
// Manual (GFDL) as PDF and HTML, the Guide for Debian Maintainers (Expat
// licence) as PDF and as a site of HTML pages, and CMake's documentation
// (BSD-3-Clause) as a Sphinx site.
const (
	BashRefPDF     = "/usr/share/doc/bash/bashref.pdf"
	BashRefHTML    = "/usr/share/doc/bash/bashref.html"
	BashDocPackage = "bash-doc"
	DebmakePDF     = "/usr/share/doc/debmake-doc/debmake-doc.en.pdf"
	DebmakeHTML    = "/usr/share/doc/debmake-doc/html"
	DebmakePackage = "debmake-doc"
	CMakeHTML      = "/usr/share/doc/cmake-data/html"
	CMakePackage   = "cmake-doc"
	PopplerPackage = "poppler-utils"
)
