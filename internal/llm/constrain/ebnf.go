package constrain

func compileEBNF(b *builder, text string) (frag, error) {
	return frag{}, errorf(ErrUnsupported, "grammar constraints")
}
