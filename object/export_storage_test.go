package object

// SerialisedSize is serialisedSize, for tests of MaxValueBytes' definition.
func SerialisedSize(v any) int { return serialisedSize(v) }
