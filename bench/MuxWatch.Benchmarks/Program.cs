using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Running;
using MuxWatch.Benchmarks;

// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- --filter '*'      (BenchmarkDotNet)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- hook-overhead     (interleaved ratio)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- app-cost          (the cost to a loaded app, interleaved)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- probe-scaling     (probe and render cost at 1..500 endpoints)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- cluster-cost      (the probe and scrape for a cluster of 6 and 60 nodes)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- sidecar-scale     (the sidecar's memory and scrape at 10..500, vs redis_exporter)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- sidecar-fleet     (50 and 500 separate endpoints, native and JIT builds: the sidecar's CPU, memory, scrape; each server's cost, vs redis_exporter)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- hostile-memory    (the sidecar's memory against a server sending oversized replies)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- idle-cost         (the CPU an idle app pays for watching, beside the health check)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- witness-cost      (the witness thread's own CPU, quiet and busy)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- capture-cost      (one stack capture of the pool: time, CPU, memory, the app's requests meanwhile; --idle: alone)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- fork-projection   (the next fork's projection against the real fork, as the dataset grows)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- prometheus-floor scrape.txt  (prometheus-net alone serving a saved scrape's series)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- confidence        (each confidence word's share right, tuning and held-out parts of the corpus)
// Smoke runs (what the test command does): --filter '*' --job dry --inProcess; hook-overhead --rounds 3 --throws 100
if (args.Length > 0 && args[0] == "confidence")
{
    return ConfidenceCalibration.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "hook-overhead")
{
    return HookOverhead.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "app-cost")
{
    return await AppCost.RunAsync(args[1..]);
}

if (args.Length > 0 && args[0] == "probe-scaling")
{
    return await ProbeScaling.RunAsync(args[1..]);
}

if (args.Length > 0 && args[0] == "cluster-cost")
{
    return await ClusterCost.RunAsync(args[1..]);
}

if (args.Length > 0 && args[0] == "witness-cost")
{
    return await WitnessCost.RunAsync(args[1..]);
}

if (args.Length > 0 && args[0] == "capture-cost")
{
    return await CaptureCost.RunAsync(args[1..]);
}

if (args.Length > 0 && args[0] == "fork-projection")
{
    return await ForkProjection.RunAsync(args[1..]);
}

if (args.Length > 0 && args[0] == "idle-cost")
{
    return await IdleCost.RunAsync(args[1..]);
}

if (args.Length > 0 && args[0] == "hostile-memory")
{
    return await HostileMemory.RunAsync(args[1..]);
}

if (args.Length > 0 && args[0] == "idle-app")
{
    return await IdleCost.RunAppAsync(args[1..]);
}

if (args.Length > 0 && args[0] == "sidecar-fleet")
{
    return await SidecarFleet.RunAsync(args[1..]);
}

if (args.Length > 0 && args[0] == "prometheus-floor")
{
    // prometheus-floor FILE [SCRAPES]: prometheus-net alone serving the series of a saved scrape (the floor sidecar-fleet measures)
    await PrometheusNetFloor.MedianAsync(await File.ReadAllTextAsync(args[1]), args.Length > 2 ? int.Parse(args[2], System.Globalization.CultureInfo.InvariantCulture) : 50);
    return 0;
}

if (args.Length > 0 && args[0] == "sidecar-scale")
{
    return await SidecarScale.RunAsync(args[1..]);
}

IConfig config = DefaultConfig.Instance;
#if DEBUG
// Debug builds only serve the smoke run; figures come from Release builds (docs/benchmarks.md).
config = config.WithOptions(ConfigOptions.DisableOptimizationsValidator);
#endif
BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args, config);
return 0;
