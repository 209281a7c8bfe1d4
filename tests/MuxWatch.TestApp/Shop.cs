using System.Runtime.CompilerServices;
using StackExchange.Redis;

namespace Shop;

// The code of an app like a user's, named as its methods would be: where MuxWatch's stack capture must find the
// pool's workers. NoInlining keeps each method a frame of its own whatever the JIT decides for a method this small
// (in a real app a method inlined into its caller is named by its caller, as the runtime's stacks show it).

/// <summary>Loads a cart with a synchronous call over the client's async method: the sync-over-async mistake.</summary>
internal sealed class CartService(IDatabase db)
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public RedisValue LoadCart()
    {
#pragma warning disable SER307 // the very mistake this app makes on purpose: sync over async on pool threads
        return db.StringGetAsync("muxwatch:cart").GetAwaiter().GetResult();
#pragma warning restore SER307
    }
}

/// <summary>Waits for a report by blocking on a task that is not even Redis's.</summary>
internal static class ReportService
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void WaitForReport() => Task.Delay(TimeSpan.FromMilliseconds(500)).Wait();
}

/// <summary>Computes prices on the pool's threads for 300 ms: CPU-bound, nothing blocked.</summary>
internal static class PriceCalculator
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Compute()
    {
        var computing = System.Diagnostics.Stopwatch.StartNew();
        var sum = 0L;
        while (computing.ElapsedMilliseconds < 300)
        {
            sum += computing.ElapsedTicks % 7; // work, not a wait
        }

        return sum;
    }
}

/// <summary>The first requests warm a cache by blocking a moment on a task: a start-up blip, over before anyone looks.</summary>
internal static class Startup
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void WarmCache() => Task.Delay(TimeSpan.FromMilliseconds(200)).Wait();
}

/// <summary>A hosted job's own long wait on a pool thread, for a signal: a bystander of any starvation beside it.</summary>
internal static class NightlyJob
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void WaitForSignal(ManualResetEventSlim signal) => signal.Wait(TimeSpan.FromMinutes(5));
}
