namespace MuxWatch.Model;

/// <summary>One place in the app's own code where the thread pool's workers were found, and how many.</summary>
/// <param name="Method">The innermost method of the app's code on those threads (<c>OrderService.LoadCart</c>: type and method, no namespace).</param>
/// <param name="BlockedVia">How they waited (<c>GetAwaiter().GetResult()</c>, <c>.Wait()</c>, <c>.Result</c>, <c>lock</c>, <c>Thread.Sleep</c>, ...); null for threads running, not blocked.</param>
/// <param name="Threads">How many workers were there.</param>
public sealed record PoolThreadSite(string Method, string? BlockedVia, int Threads)
{
    /// <summary>True when the threads were blocked in a wait, not running.</summary>
    public bool Blocked => BlockedVia is not null;
}
