// Package splitmix is SplitMix64's finaliser (Steele, Lea and Flood,
// "Fast Splittable Pseudorandom Number Generators", OOPSLA 2014): the one
// hash dosim draws every seeded decision that must not touch a runtime's
// shared source from (a random fault, a latency, a swarm profile, a mix
// seed's strategy and depth).
package splitmix

// Hash is one step of SplitMix64 from x: a well-mixed 64-bit hash.
func Hash(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
