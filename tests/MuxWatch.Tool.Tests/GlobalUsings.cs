// Every layer of the core, for every test file: tests read across layers by design.
