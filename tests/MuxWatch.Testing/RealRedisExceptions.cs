using System.Reflection;
using StackExchange.Redis;

namespace MuxWatch.Testing;

/// <summary>
/// Real StackExchange.Redis exception objects for tests that need the real types without a server
/// (their constructors are internal; the integration tests get them from real timeouts).
/// </summary>
public static class RealRedisExceptions
{
    /// <summary>A real <see cref="RedisTimeoutException"/> with <paramref name="message"/>.</summary>
    public static RedisTimeoutException Timeout(string message) =>
        (RedisTimeoutException)Activator.CreateInstance(
            typeof(RedisTimeoutException),
            BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic,
            binder: null,
            args: [message, CommandStatus.Sent],
            culture: null)!;
}
