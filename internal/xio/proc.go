package xio

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcessAge is how long this process has existed, what ran before main
// included (the dynamic loader's work: libtorch's libraries), from
// Linux's /proc (start time in clock ticks since boot, at USER_HZ = 100,
// against the uptime): 10 ms resolution; 0 where /proc cannot say.
func ProcessAge() time.Duration {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	up, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	// Fields after the command's closing parenthesis start at field 3;
	// starttime is field 22.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	u := strings.Fields(string(up))
	if len(f) < 20 || len(u) == 0 {
		return 0
	}
	ticks, err1 := strconv.ParseFloat(f[19], 64)
	now, err2 := strconv.ParseFloat(u[0], 64)
	if err1 != nil || err2 != nil || now < ticks/100 {
		return 0
	}
	return time.Duration((now - ticks/100) * float64(time.Second))
}
