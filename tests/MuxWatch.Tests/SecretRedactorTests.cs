namespace MuxWatch.Tests;

public sealed class SecretRedactorTests
{
    [Theory]
    [InlineData("myredis.cache:6380,password=hunter2,ssl=True,abortConnect=False", "hunter2")]
    [InlineData("myredis:6379,user=app-user,password=p@ss;w0rd", "app-user")]
    [InlineData("host:6379, Password = s3cr3t , connectTimeout=5000", "s3cr3t")]
    [InlineData("connecting to rediss://default:topsecret@cache.example:6380/0 failed", "topsecret")]
    [InlineData("connecting to redis://onlyuser@cache.example:6379 failed", "onlyuser")]
    [InlineData("sslPassword=certpass,host:6379", "certpass")]
    [InlineData("host:6379,password=\"quoted secret\",ssl=true", "quoted secret")]
    [InlineData("host:6379,password='single quoted',ssl=true", "single quoted")]
    [InlineData("redis://app:pa/ss@cache:6379 failed", "pa/ss")]
    [InlineData("redis://app:p@ss@cache:6379 failed", "p@ss")]
    [InlineData("url=host%3A6379%2Cpassword%3Durlencoded1%2Cssl%3Dtrue", "urlencoded1")]
    [InlineData("env REDIS_PASSWORD=envsecret1 set", "envsecret1")]
    [InlineData("settings redisPassword=camelsecret1, more", "camelsecret1")]
    [InlineData("yaml password: yamlsecret1", "yamlsecret1")]
    [InlineData("{\"Redis\": {\"Password\": \"jsonsecret1\", \"Host\": \"h\"}}", "jsonsecret1")]
    [InlineData("{\"password\":\"tight\\\"secret\"}", "secret")]
    [InlineData("GET /api/timeouts?access_token=tokensecret1&limit=5", "tokensecret1")]
    public void Credentials_are_masked(string text, string secret)
    {
        var redacted = SecretRedactor.Redact(text);

        Assert.DoesNotContain(secret, redacted, StringComparison.Ordinal);
        Assert.Contains(SecretRedactor.Mask, redacted, StringComparison.Ordinal);
    }

    [Fact]
    public void Text_without_credentials_is_unchanged()
    {
        const string message = "Timeout performing GET user:42 (5000ms), inst: 2, qu: 0, qs: 6, in: 0, WORKER: (Busy=40,Free=1,Min=8,Max=41), v: 3.1.31.17473";

        Assert.Equal(message, SecretRedactor.Redact(message));
    }

    [Theory]
    [InlineData("Timeout performing GET k (5000ms), note: rediss://app:cutsecret1234567890@cache:6380", "cutsecret")]
    [InlineData("Timeout performing GET k (5000ms), cache:6380,password=cutsecret1234567890", "cutsecret")]
    public void A_text_cut_short_leaves_no_password_behind(string text, string secret)
    {
        // Every cut that falls inside the secret: the token it splits is dropped, not kept unmarked.
        var at = text.IndexOf(secret, StringComparison.Ordinal);
        for (var cut = at; cut < at + 20; cut++)
        {
            Assert.DoesNotContain(secret[..3], SecretRedactor.Redact(SecretRedactor.CutAtToken(text, cut)), StringComparison.Ordinal);
        }
    }

    [Fact]
    public void A_key_that_looks_like_user_colon_id_is_not_masked()
    {
        Assert.Equal("Timeout performing GET user:42:profile (5000ms)", SecretRedactor.Redact("Timeout performing GET user:42:profile (5000ms)"));
    }

    [Fact]
    public void A_password_pasted_with_a_timeout_never_reaches_the_report()
    {
        var report = TimeoutMessageReader.Read(
            "2026-11-22 ERROR redis=cache:6380,password=hunter2,ssl=True StackExchange.Redis.RedisTimeoutException: Timeout performing GET k (5000ms), qs: 1, in: 0, clientName: app, note: password=hunter2");

        Assert.DoesNotContain("hunter2", report.Text, StringComparison.Ordinal);
        Assert.All(report.Fields, f => Assert.DoesNotContain("hunter2", f.Value.Raw, StringComparison.Ordinal));
        Assert.All(report.Notes, n => Assert.DoesNotContain("hunter2", n, StringComparison.Ordinal));
        Assert.Equal(RedisErrorKind.SyncTimeout, report.Kind);
        Assert.Equal(1, report.Number("qs"));
    }
}
