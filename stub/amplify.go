package stub

import "fmt"

// Amplification returns the most times an object can be reached when an
// application loop makes outer attempts of a call through a stub allowing
// maxRetries retries (rule S15): every outer attempt may itself be tried
// maxRetries+1 times. Three outer attempts around a default stub reach the
// object up to 15 times.
func Amplification(outer, maxRetries int) (int, error) {
	if outer < 1 {
		return 0, fmt.Errorf("amplification: outer attempts is %d: %w: must be >= 1", outer, ErrRange)
	}
	if maxRetries < MinMaxRetries || maxRetries > MaxMaxRetries {
		return 0, rangeErr("maxRetries", fmt.Sprint(maxRetries), MinMaxRetries, MaxMaxRetries)
	}
	return outer * (maxRetries + 1), nil
}
