# Owned by the interposer: targets that build $(LIBDIR)/libmpiflow-*.so.
.PHONY: libs
libs:
