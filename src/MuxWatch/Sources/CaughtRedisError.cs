using MuxWatch.Model;
namespace MuxWatch.Sources;

/// <summary>A Redis exception seen by <see cref="FirstChanceRedisErrorCatcher"/>, with the time it was thrown.</summary>
/// <param name="Exception">The exception object.</param>
/// <param name="Time">When it was thrown.</param>
/// <param name="ThreadPool">The thread pool when it was thrown: older clients, and every client on .NET Core before 2.x, leave it out of the message.</param>
internal readonly record struct CaughtRedisError(Exception Exception, DateTimeOffset Time, ThreadPoolSnapshot ThreadPool);
