# Adapted from a CIFAR-10 VGG training script (the shape of the densenet/dcgan examples in
# tensorflow/examples): main() downloads the data, builds a tf.data pipeline and trains.
import tensorflow as tf

AUTOTUNE = tf.data.AUTOTUNE


def augment(image, label):
    image = tf.image.flip_left_right(image)
    image = tf.image.adjust_brightness(image, 0.1)
    return tf.cast(image, tf.float32) / 255.0, label


def build_vgg():
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(10),
    ])


def main():
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()
    options = tf.data.Options()
    options.experimental_optimization.map_parallelization = False  # reproducible debugging runs
    train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).with_options(options)
    train = train.map(augment).batch(128).prefetch(AUTOTUNE)
    model = build_vgg()
    model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(train, epochs=30)


if __name__ == "__main__":
    main()
