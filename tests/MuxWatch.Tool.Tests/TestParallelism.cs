// Most of this project's tests wait rather than compute: on a Prometheus scrape and rule evaluation, an Alertmanager
// notification, a server's DEBUG SLEEP, a cluster's failover, a process to start. Four test classes at once on two
// cores, not xunit's default of one per core, so that the waits overlap; the classes that must not share the machine
// run alone (RunsAlone), and the CPU-bound ones (the native publish) keep a core to themselves most of the time.
[assembly: CollectionBehavior(MaxParallelThreads = 4)]
