package gguf

// Typed metadata lookups for readers of a file's metadata: a missing key is
// an error wrapping ErrNotFound, a value of another type one wrapping
// ErrInvalid, both naming the file and the key.

func (f *File) lookup(key string) (Value, error) {
	v, ok := f.Lookup(key)
	if !ok {
		return Value{}, fieldError(ErrNotFound, f.Path, key, "missing")
	}
	return v, nil
}

func (f *File) wrongType(key string, v Value, want string) error {
	return fieldError(ErrInvalid, f.Path, key, "%s %s, want %s", v.Type, v, want)
}

// Uint returns a non-negative integer value.
func (f *File) Uint(key string) (uint64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	if n, ok := v.Uint(); ok {
		return n, nil
	}
	return 0, f.wrongType(key, v, "a non-negative integer")
}

// Float returns a float32 or float64 value.
func (f *File) Float(key string) (float64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	if x, ok := v.Float(); ok {
		return x, nil
	}
	return 0, f.wrongType(key, v, "a float")
}

// Bool returns a bool value.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.lookup(key)
	if err != nil {
		return false, err
	}
	if b, ok := v.Bool(); ok {
		return b, nil
	}
	return false, f.wrongType(key, v, "a bool")
}

// String returns a string value.
func (f *File) String(key string) (string, error) {
	v, err := f.lookup(key)
	if err != nil {
		return "", err
	}
	if s, ok := v.Text(); ok {
		return s, nil
	}
	return "", f.wrongType(key, v, "a string")
}

// Strings returns an array of strings.
func (f *File) Strings(key string) ([]string, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if s, ok := v.Strings(); ok {
		return s, nil
	}
	return nil, f.wrongType(key, v, "an array of strings")
}

// Floats returns an array of floats as float32.
func (f *File) Floats(key string) ([]float32, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if x, ok := v.Floats(); ok {
		return x, nil
	}
	return nil, f.wrongType(key, v, "an array of floats")
}

// Ints returns an array of integers.
func (f *File) Ints(key string) ([]int64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if x, ok := v.Ints(); ok {
		return x, nil
	}
	return nil, f.wrongType(key, v, "an array of integers")
}
