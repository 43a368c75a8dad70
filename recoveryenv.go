package feedkit

import (
	"fmt"
	"os"
	"strconv"
)

// RecoveryEnabledEnv is the environment variable that turns recoveries on or off for
// development, over Config.Recovery.Disabled: "true" or "false" (any form
// strconv.ParseBool accepts); unset or empty leaves the config alone. New reads it, so
// that a developer can run a process without the recovery API, or force recoveries on,
// without editing its configuration; package recovery reads no environment.
const RecoveryEnabledEnv = "FEEDKIT_RECOVERY_ENABLED"

// recoveriesDisabled applies RecoveryEnabledEnv, as getenv reads it, over disabled.
func recoveriesDisabled(disabled bool, getenv func(string) string) (bool, error) {
	v := getenv(RecoveryEnabledEnv)
	if v == "" {
		return disabled, nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return disabled, fmt.Errorf("feedkit: environment variable %s=%q is not a boolean", RecoveryEnabledEnv, v)
	}
	return !on, nil
}

var osGetenv = os.Getenv
