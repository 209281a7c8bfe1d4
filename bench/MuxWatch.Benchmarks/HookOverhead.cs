using System.Diagnostics;
using System.Globalization;
using MuxWatch.Sources;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.Benchmarks;

/// <summary>
/// What the first-chance hook adds to a throw, measured side by side in one process with the variants
/// interleaved (hook off, hook on, on, off, ...), so that drift in the machine hits both alike.
/// Prints medians and their ratio; asserts nothing.
/// </summary>
internal static class HookOverhead
{
    public static int Run(string[] args)
    {
        var rounds = IntOption(args, "--rounds", 21);
        var throws = IntOption(args, "--throws", 20_000);
        var timeout = RealRedisExceptions.Timeout(BenchmarkMessages.Timeout);

        Console.WriteLine($"hook-overhead: {rounds} rounds of {throws} throws per variant, interleaved");
        Report("other exception type", rounds, throws, () => ThrowOther());
        Report("RedisTimeoutException", rounds, throws, () => ThrowRedis(timeout));

        // A new exception every throw, as real timeouts are: the hook's whole work on first sight (a
        // thread-pool sample and a queue write; reading and diagnosing happen later, off this thread).
        // Both variants construct the exception; the difference is the hook's.
        Report("new RedisTimeoutException", rounds, throws, () => ThrowRedis(RealRedisExceptions.Timeout(BenchmarkMessages.Timeout)), queueCapacity: throws + 1);
        Floor(rounds, throws);
        return 0;
    }

    /// <summary>The runtime's own price for any first-chance subscriber: an empty handler, same interleaving.</summary>
    private static void Floor(int rounds, int throws)
    {
        var off = new List<double>();
        var on = new List<double>();
        EventHandler<System.Runtime.ExceptionServices.FirstChanceExceptionEventArgs> empty = (_, _) => { };
        for (var round = 0; round < rounds; round++)
        {
            foreach (var hooked in round % 2 == 0 ? (bool[])[false, true] : [true, false])
            {
                if (hooked)
                {
                    AppDomain.CurrentDomain.FirstChanceException += empty;
                }

                (hooked ? on : off).Add(Measure(throws, ThrowOther).Nanoseconds);
                AppDomain.CurrentDomain.FirstChanceException -= empty;
            }
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {"floor: empty handler",-22} none     {Median(off),8:F0} ns/throw            empty   {Median(on),8:F0} ns/throw            ratio {Median(on) / Median(off):F3}"));
    }

    private static void Report(string what, int rounds, int throws, Action throwOnce, int queueCapacity = 1)
    {
        var off = new List<double>();
        var on = new List<double>();
        var offBytes = new List<double>();
        var onBytes = new List<double>();
        for (var round = 0; round < rounds; round++)
        {
            // Alternate which variant goes first, so neither always runs warmer.
            foreach (var hooked in round % 2 == 0 ? (bool[])[false, true] : [true, false])
            {
                using var catcher = new FirstChanceRedisErrorCatcher(TimeProvider.System, queueCapacity);
                if (hooked)
                {
                    catcher.Start();
                }

                var (nanoseconds, bytes) = Measure(throws, throwOnce);
                (hooked ? on : off).Add(nanoseconds);
                (hooked ? onBytes : offBytes).Add(bytes);
            }
        }

        var medianOff = Median(off);
        var medianOn = Median(on);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {what,-26} hook off {medianOff,8:F0} ns/throw {Median(offBytes),6:F0} B   hook on {medianOn,8:F0} ns/throw {Median(onBytes),6:F0} B   ratio {medianOn / medianOff:F3}"));
    }

    private static (double Nanoseconds, double Bytes) Measure(int throws, Action throwOnce)
    {
        var allocatedBefore = GC.GetAllocatedBytesForCurrentThread();
        var clock = Stopwatch.StartNew();
        for (var i = 0; i < throws; i++)
        {
            throwOnce();
        }

        clock.Stop();
        var allocated = GC.GetAllocatedBytesForCurrentThread() - allocatedBefore;
        return (clock.Elapsed.TotalNanoseconds / throws, (double)allocated / throws);
    }

    private static void ThrowOther()
    {
        try
        {
            throw new InvalidOperationException("not redis");
        }
        catch (InvalidOperationException)
        {
        }
    }

    // The same object every time: after its first throw the hook's once-per-object check ends the work,
    // so this measures the steady cost of recognising a Redis timeout, not of queueing it.
    private static void ThrowRedis(RedisTimeoutException timeout)
    {
        try
        {
            throw timeout;
        }
        catch (RedisTimeoutException)
        {
        }
    }

    private static double Median(List<double> values)
    {
        values.Sort();
        return values.Count % 2 == 1 ? values[values.Count / 2] : (values[values.Count / 2 - 1] + values[values.Count / 2]) / 2;
    }

    internal static int IntOption(string[] args, string name, int fallback)
    {
        var at = Array.IndexOf(args, name);
        return at >= 0 && at + 1 < args.Length && int.TryParse(args[at + 1], CultureInfo.InvariantCulture, out var value) && value > 0 ? value : fallback;
    }
}
