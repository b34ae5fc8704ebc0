package sourceset

import (
	"testing"
	"time"
)

func TestFetchersTimeout(t *testing.T) {
	t.Setenv(timeoutEnv, "")
	if d, err := (&Fetchers{}).timeout(); d != 0 || err != nil {
		t.Errorf("unset: %v %v, want 0 (remote's default)", d, err)
	}
	t.Setenv(timeoutEnv, "90s")
	if d, err := (&Fetchers{}).timeout(); d != 90*time.Second || err != nil {
		t.Errorf("%s=90s: %v %v", timeoutEnv, d, err)
	}
	if d, _ := (&Fetchers{Timeout: time.Second}).timeout(); d != time.Second {
		t.Errorf("Timeout field: %v, want 1s", d)
	}
	t.Setenv(timeoutEnv, "soon")
	if _, err := (&Fetchers{}).timeout(); err == nil {
		t.Errorf("%s=soon accepted", timeoutEnv)
	}
}
