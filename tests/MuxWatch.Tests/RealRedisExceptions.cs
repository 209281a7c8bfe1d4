using System.Reflection;
using StackExchange.Redis;

namespace MuxWatch.Tests;

/// <summary>
/// Real StackExchange.Redis exception objects for tests that need the real types without a server
/// (their constructors are internal; the integration tests get them from real timeouts).
/// </summary>
internal static class RealRedisExceptions
{
    public static RedisTimeoutException Timeout(string message) =>
        (RedisTimeoutException)Activator.CreateInstance(
            typeof(RedisTimeoutException),
            BindingFlags.Instance | BindingFlags.NonPublic,
            binder: null,
            args: [message, CommandStatus.Sent],
            culture: null)!;
}
