using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Running;
using MuxWatch.Benchmarks;

// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- --filter '*'      (BenchmarkDotNet)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- hook-overhead     (interleaved ratio)
// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- app-cost          (the cost to a loaded app, interleaved)
// Smoke runs (what the test command does): --filter '*' --job dry --inProcess; hook-overhead --rounds 3 --throws 100
if (args.Length > 0 && args[0] == "hook-overhead")
{
    return HookOverhead.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "app-cost")
{
    return await AppCost.RunAsync(args[1..]);
}

IConfig config = DefaultConfig.Instance;
#if DEBUG
// Debug builds only serve the smoke run; figures come from Release builds (docs/benchmarks.md).
config = config.WithOptions(ConfigOptions.DisableOptimizationsValidator);
#endif
BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args, config);
return 0;
