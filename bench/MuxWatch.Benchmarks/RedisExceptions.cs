using System.Reflection;
using StackExchange.Redis;

namespace MuxWatch.Benchmarks;

/// <summary>Real <see cref="RedisTimeoutException"/> objects for the benchmarks (the client's constructor is internal).</summary>
internal static class RedisExceptions
{
    public static RedisTimeoutException Timeout(string message = "Timeout performing GET k (5000ms), qs: 1, in: 0") =>
        (RedisTimeoutException)Activator.CreateInstance(
            typeof(RedisTimeoutException),
            BindingFlags.Instance | BindingFlags.NonPublic,
            binder: null,
            args: [message, CommandStatus.Sent],
            culture: null)!;
}
