using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Running;

// dotnet run -c Release --project bench/MuxWatch.Benchmarks -- --filter '*'
// Smoke run (what the test command does): add --job dry --inProcess
IConfig config = DefaultConfig.Instance;
#if DEBUG
// Debug builds only serve the smoke run; figures come from Release builds (docs/benchmarks.md).
config = config.WithOptions(ConfigOptions.DisableOptimizationsValidator);
#endif
BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args, config);
