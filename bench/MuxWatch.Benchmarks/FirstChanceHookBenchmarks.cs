using BenchmarkDotNet.Attributes;
using MuxWatch.Sources;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.Benchmarks;

/// <summary>
/// What MuxWatch's first-chance hook adds to a throw: for an exception of another type (the cost every
/// app pays), and for a Redis timeout (type check, once-per-object check, pool sample, enqueue).
/// Each case runs in its own process, so the hook is installed only where <see cref="Hook"/> is true.
/// </summary>
[MemoryDiagnoser]
public class FirstChanceHookBenchmarks
{
    private FirstChanceRedisErrorCatcher? _catcher;
    private CancellationTokenSource? _drain;

    [Params(false, true)]
    public bool Hook { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        if (!Hook)
        {
            return;
        }

        _catcher = new FirstChanceRedisErrorCatcher(TimeProvider.System);
        _catcher.Start();
        _drain = new CancellationTokenSource();
        var catcher = _catcher;
        var token = _drain.Token;
        _ = Task.Run(async () =>
        {
            try
            {
                await foreach (var _ in catcher.ReadAllAsync(token))
                {
                }
            }
            catch (OperationCanceledException)
            {
            }
        });
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _drain?.Cancel();
        _catcher?.Dispose();
    }

    [Benchmark(Baseline = true)]
    public int ThrowOtherException()
    {
        try
        {
            throw new InvalidOperationException("not redis");
        }
        catch (InvalidOperationException ex)
        {
            return ex.HResult;
        }
    }

    [Benchmark]
    public int ThrowRedisTimeout()
    {
        try
        {
            throw RealRedisExceptions.Timeout(BenchmarkMessages.Timeout);
        }
        catch (RedisTimeoutException ex)
        {
            return ex.HResult;
        }
    }
}
